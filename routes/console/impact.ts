// The "After the decision" panel of an opportunity's page: get_opportunity_impact for an adopted
// or done one, each metric's before and after in words and as a small chart (the decision day
// marked, each period's mean drawn across it).
import type { FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import getOpportunityImpact from '../../tools/get-opportunity-impact.ts'
import type { MetricImpact, OpportunityImpact } from '../../schemas/impact.ts'
import type { Opportunity } from '../../schemas/opportunities.ts'
import { addDays } from '../../core/time.ts'
import { niceTicks } from './chart.ts'
import { run } from './actions.ts'

type Metric = Static<typeof MetricImpact>

export interface ImpactPanel {
  impact: Static<typeof OpportunityImpact>
  metrics: { metric: string; label: string; before: string; after: string; change: string; unusualness: string; level: string; trend: string | null; chart: string }[]
}

/**
 * The panel of an adopted or done opportunity (not merged), or null: for any other, and for one
 * whose history has no decision to measure from (the tool's 409: a status set before there was
 * a history).
 */
export async function impactFor(request: FastifyRequest, project: string, o: Opportunity): Promise<ImpactPanel | null> {
  if (o.merged_into || (o.status !== 'adopted' && o.status !== 'done')) return null
  let impact
  try {
    impact = await run(request, getOpportunityImpact, { event_id: o.event_id }, project)
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 409) return null
    throw err
  }
  return {
    impact,
    metrics: impact.metrics.map((m) => ({
      metric: m.metric,
      label: m.label,
      before: perDay(m.before_mean),
      after: perDay(m.after_mean),
      change: changeText(m),
      unusualness: unusualnessText(m),
      level: m.unusualness ?? 'none',
      trend: trendText(m),
      chart: impactChart(m, impact.decision.day, impact.days),
    })),
  }
}

const number = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1))
const perDay = (n: number | null) => (n === null ? '—' : `${number(n)} a day`)
const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : '±'}${number(Math.abs(n))}`

function changeText(m: Metric): string {
  if (m.change === null) return 'no after-day has closed yet'
  const relative = m.relative_change === null ? 'from none' : `${signed(Math.round(m.relative_change * 1000) / 10)}%`
  return `${signed(m.change)} a day (${relative})`
}

function unusualnessText(m: Metric): string {
  if (m.z === null) return 'not measurable yet'
  const words = { usual: 'within the usual day-to-day range', unusual: 'unusual', very_unusual: 'very unusual' }[m.unusualness!]
  return `${words} (z = ${m.z})`
}

/** A trend already under way before the decision, when it alone moves the mean by a typical swing or more. */
function trendText(m: Metric): string | null {
  if (m.trend_change === null || m.spread === null || Math.abs(m.trend_change) < m.spread) return null
  return `Already ${m.trend_change > 0 ? 'rising' : 'falling'} before the decision: that trend alone gives ${signed(m.trend_change)} a day.`
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * Both periods on one axis of 2N + 1 days: the before-days, the decision day (a dashed line, in
 * neither period), the after-days (those not closed yet stay empty), each period's mean a dashed
 * line across it.
 */
export function impactChart(m: Metric, decisionDay: string, n: number, width = 360, height = 150): string {
  const pad = { left: 34, right: 8, top: 16, bottom: 22 }
  const w = width - pad.left - pad.right
  const h = height - pad.top - pad.bottom
  const values = [...m.before, ...m.after].map((d) => d.value)
  const ticks = niceTicks(Math.max(0, ...values, m.before_mean ?? 0, m.after_mean ?? 0), 3)
  const max = ticks.at(-1)!
  const slot = w / (2 * n + 1)
  const x = (i: number) => pad.left + (i + 0.5) * slot
  const y = (v: number) => pad.top + h - (v / max) * h
  const f = (v: number) => v.toFixed(1)
  const grid = ticks
    .map((t) => `<line x1="${pad.left}" x2="${pad.left + w}" y1="${f(y(t))}" y2="${f(y(t))}" stroke="#e5e8ee"/><text x="${pad.left - 5}" y="${f(y(t) + 4)}" text-anchor="end" font-size="11" fill="#5b6474">${t}</text>`)
    .join('')
  const line = (days: Metric['before'], first: number, cls: string) => {
    if (days.length === 0) return ''
    const points = days.map((d, i) => `${f(x(first + i))},${f(y(d.value))}`).join(' ')
    const dots = days.map((d, i) => `<circle cx="${f(x(first + i))}" cy="${f(y(d.value))}" r="2.2"><title>${d.date}: ${d.value}</title></circle>`).join('')
    return `<g class="${cls}"><polyline fill="none" stroke-width="1.8" points="${points}"/>${dots}</g>`
  }
  const mean = (value: number | null, from: number, count: number, cls: string) =>
    value === null || count === 0 ? '' : `<line class="${cls} mean" x1="${f(x(from) - slot / 2)}" x2="${f(x(from + count - 1) + slot / 2)}" y1="${f(y(value))}" y2="${f(y(value))}" stroke-width="1.5" stroke-dasharray="5 3"><title>mean: ${value}</title></line>`
  const decision = x(n)
  const label = (i: number, text: string, anchor: string) => `<text x="${f(x(i))}" y="${height - 6}" text-anchor="${anchor}" font-size="11" fill="#5b6474">${text}</text>`
  const first = m.before[0]?.date ?? ''
  const aria = `${m.label}: before ${m.before_mean ?? 'none'} a day, after ${m.after_mean ?? 'none yet'} a day`
  return `<svg xmlns="http://www.w3.org/2000/svg" class="impact-chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(aria)}">` +
    grid +
    `<line class="decision" x1="${f(decision)}" x2="${f(decision)}" y1="${pad.top - 4}" y2="${pad.top + h}" stroke="#5b6474" stroke-dasharray="3 3"><title>decision day ${decisionDay}</title></line>` +
    `<text x="${f(decision)}" y="${pad.top - 6}" text-anchor="middle" font-size="10" fill="#5b6474">decision</text>` +
    mean(m.before_mean, 0, m.before.length, 'before') + mean(m.after_mean, n + 1, m.after.length, 'after') +
    line(m.before, 0, 'before') + line(m.after, n + 1, 'after') +
    (first ? label(0, first.slice(5), 'start') : '') + label(n, decisionDay.slice(5), 'middle') + label(2 * n, addDays(decisionDay, n).slice(5), 'end') +
    '</svg>'
}
