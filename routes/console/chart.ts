// A small server-rendered SVG line chart: numbers in, markup out (no user text inside).
export interface Series {
  className: string
  label: string
  values: number[]
  /**
   * A comparison series (the previous period), drawn lighter and dashed under the others, day i
   * beside day i; `labels` are its own dates for the points' titles.
   */
  previous?: { labels: string[] }
}

/**
 * Round axis ticks for counts from 0: a step of 1, 2 or 5 × 10^n (at least 1) giving about
 * `target` intervals, and a top tick at or above `max` (0/50/100/150 for 116, never 0/39/77/116).
 */
export function niceTicks(max: number, target = 4): number[] {
  const top = Math.max(1, Math.ceil(max))
  const raw = top / target
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const step = Math.max(1, ([1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw - 1e-9) ?? 10 * magnitude))
  const ticks: number[] = []
  for (let t = 0; t < top + step; t += step) {
    ticks.push(t)
    if (t >= top) break
  }
  return ticks
}

export interface ChartOptions {
  width?: number
  height?: number
  /** At most this many date labels under the x axis. */
  maxLabels?: number
  fontSize?: number
  className?: string
  /** The last day is not over (today): its points hollow, the segment to it dashed, a label above it. */
  partialLast?: boolean
  /** The SVG's accessible name. */
  label?: string
}

export function lineChart(labels: string[], series: Series[], options: ChartOptions = {}): string {
  const { width = 900, height = 260, maxLabels = 10, fontSize = 11, className = '', partialLast = false, label = 'Daily metrics chart' } = options
  // top: room for the "today so far" label; right: room for half of the last date label
  const pad = { left: 44, right: 24, top: partialLast ? fontSize + 12 : 12, bottom: 28 }
  const w = width - pad.left - pad.right
  const h = height - pad.top - pad.bottom
  const ticks = niceTicks(Math.max(0, ...series.flatMap((s) => s.values)))
  const max = ticks.at(-1)!
  const step = labels.length > 1 ? w / (labels.length - 1) : 0
  const x = (i: number) => pad.left + i * step
  const y = (v: number) => pad.top + h - (v / max) * h
  const grid = ticks
    .map((t) => `<line x1="${pad.left}" x2="${pad.left + w}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e5e8ee"/><text x="${pad.left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="${fontSize}" fill="#5b6474">${t}</text>`)
    .join('')
  const every = Math.max(1, Math.ceil(labels.length / maxLabels))
  const xLabels = labels
    .map((l, i) => ((i % every === 0 && (i === labels.length - 1 || labels.length - 1 - i >= every / 2)) || i === labels.length - 1 ? `<text x="${x(i).toFixed(1)}" y="${height - 8}" text-anchor="middle" font-size="${fontSize}" fill="#5b6474">${escapeXml(l.slice(5))}</text>` : ''))
    .join('')
  const last = labels.length - 1
  const partial = partialLast && last >= 0
  // The day not over: a shaded column and its label, right-aligned to the chart's edge.
  const today = partial
    ? `<g class="partial-day"><rect x="${(x(last) - Math.min(step / 2, 10)).toFixed(1)}" y="${pad.top}" width="${Math.min(step / 2, 10).toFixed(1)}" height="${h}" fill="#eef1f6"/>` +
      `<line x1="${x(last).toFixed(1)}" x2="${x(last).toFixed(1)}" y1="${pad.top - 4}" y2="${pad.top + h}" stroke="#9aa3b2" stroke-dasharray="2 3"/>` +
      `<text x="${(x(last) + pad.right - 2).toFixed(1)}" y="${pad.top - 7}" text-anchor="end" font-size="${fontSize}" fill="#5b6474">today so far</text></g>`
    : ''
  const point = (cls: string, i: number, v: number, title: string, hollow: boolean) =>
    `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="${hollow ? 3.5 : 2.5}" class="${cls}${hollow ? ' partial' : ''}" fill="${hollow ? '#fff' : 'currentColor'}"${hollow ? ' stroke-width="2"' : ''}><title>${escapeXml(title)}: ${v}${hollow ? ' (today so far)' : ''}</title></circle>`
  const line = (s: Series) => {
    if (s.previous) {
      const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')
      const titled = s.values.map((v, i) => `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="1.5" class="${s.className} previous" fill="currentColor"><title>${escapeXml(s.previous!.labels[i] ?? '')}: ${v}</title></circle>`).join('')
      return `<g class="previous"><title>${escapeXml(s.label)}</title><polyline class="${s.className} previous" fill="none" stroke-width="1.5" stroke-dasharray="5 4" points="${points}"/>${titled}</g>`
    }
    // A day not over is drawn apart: the line stops at the last whole day, a dashed segment reaches today's hollow point.
    const whole = partial ? s.values.slice(0, -1) : s.values
    const points = whole.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')
    const dots = s.values.map((v, i) => point(s.className, i, v, labels[i] ?? '', partial && i === last)).join('')
    const toToday = partial && last > 0
      ? `<line class="${s.className} partial" x1="${x(last - 1).toFixed(1)}" y1="${y(s.values[last - 1]!).toFixed(1)}" x2="${x(last).toFixed(1)}" y2="${y(s.values[last]!).toFixed(1)}" stroke-width="2" stroke-dasharray="4 3"/>`
      : ''
    return `<g><title>${escapeXml(s.label)}</title>${whole.length > 0 ? `<polyline class="${s.className}" fill="none" stroke-width="2" points="${points}"/>` : ''}${toToday}${dots}</g>`
  }
  // Comparison lines first, under the period's own.
  const lines = [...series.filter((s) => s.previous), ...series.filter((s) => !s.previous)].map(line).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}"${className ? ` class="${className}"` : ''} role="img" aria-label="${escapeXml(label)}">${grid}${today}${xLabels}${lines}</svg>`
}

/** A tiny inline line of daily values (no axes), each point titled with its label and value. */
export function sparkline(labels: string[], values: number[], width = 120, height = 28): string {
  const max = Math.max(1, ...values)
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0
  const x = (i: number) => 2 + i * step
  const y = (v: number) => 2 + (height - 4) - (v / max) * (height - 4)
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')
  const dots = values.map((v, i) => `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="1.6"><title>${escapeXml(labels[i] ?? '')}: ${v}</title></circle>`).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" class="spark" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(values.join(', '))}"><polyline fill="none" stroke-width="1.5" points="${points}"/>${dots}</svg>`
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
