import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { compareDays } from '../core/impact.ts'
import { addDays, dayRange, localDate } from '../core/time.ts'
import { DAILY_USE, SIGNUP } from '../schemas/metrics.ts'
import { DEFAULT_METRICS, IMPACT_DAYS, ImpactArgs, OpportunityImpact, decisionStatuses, type DecisionStatus } from '../schemas/impact.ts'

/** What a metric counts: an event's unique users a day, or its raw count. */
interface MetricSource { event: string; field: 'users' | 'events'; label: string }

const NAMED: Record<string, MetricSource> = {
  registrations: { event: SIGNUP, field: 'users', label: 'Registrations (users who signed up)' },
  daily_users: { event: DAILY_USE, field: 'users', label: 'Daily users' },
  signup_events: { event: SIGNUP, field: 'events', label: 'Signup events' },
  daily_use_events: { event: DAILY_USE, field: 'events', label: 'Daily-use events' },
}

/** A metric's name (the schema's pattern admits only these forms) → what it counts. */
function sourceOf(metric: string): MetricSource {
  const named = NAMED[metric]
  if (named) return named
  const colon = metric.indexOf(':')
  const event = metric.slice(colon + 1)
  return metric.startsWith('users:') ? { event, field: 'users', label: `Users with ${event}` } : { event, field: 'events', label: `${event} events` }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export const IMPACT_CAVEAT =
  'This shows what happened after the decision, not what the decision caused: anything else that changed at the same time ' +
  '(a launch, a campaign, a season, a trend already under way) moves the same numbers.'

export default defineOperation({
  name: 'get_opportunity_impact',
  title: 'What the metrics did after a decision',
  description:
    'Daily metrics around an opportunity\'s decision, the moment its status last became adopted or done (review ' +
    'history): the N whole days before that day against the N days after it (default 14; the decision day ' +
    'itself in neither; days not closed yet, today included, left out and counted). Per metric (default registrations ' +
    'and daily_users; any event as users:<event> or events:<event>): both means, the change, z = how many of the ' +
    'before-days\' typical swings the after-mean lies from the before-mean, the before-days\' own trend and the change it ' +
    'alone would give, and the daily values. It shows what happened ' +
    'after the decision, not what the decision caused. Never adopted or done: 409 conflict.',
  scope: 'project',
  role: 'viewer',
  toolset: 'metrics',
  input: ImpactArgs,
  output: OpportunityImpact,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'The two weeks before and after an adopted opportunity\'s decision', args: { event_id: 'opp_7Hd2Kq9RmX4Vb8Nc1Tz6' } },
      { title: 'A week either side, with an event of its own', args: { event_id: 'opp_7Hd2Kq9RmX4Vb8Nc1Tz6', days: 7, metrics: ['daily_users', 'users:invite_sent'] } },
    ],
    invalid: [
      { title: 'Periods too short to have a spread', args: { event_id: 'opp_7Hd2Kq9RmX4Vb8Nc1Tz6', days: 2 }, field: 'days' },
      { title: 'A metric that does not exist', args: { event_id: 'opp_7Hd2Kq9RmX4Vb8Nc1Tz6', metrics: ['revenue'] }, field: 'metrics[0]' },
      { title: 'A status that is no decision', args: { event_id: 'opp_7Hd2Kq9RmX4Vb8Nc1Tz6', decision: 'contacted' }, field: 'decision' },
      { title: 'No opportunity', args: { days: 14 }, field: 'event_id' },
    ],
  },
  async handler(args, ctx) {
    const { project } = ctx
    const o = await ctx.repos.opportunities.get(project.id, args.event_id)
    if (!o) throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${project.slug}'.`)
    if (o.merged_into) {
      throw appError('NotFound', `Opportunity '${args.event_id}' is merged into '${o.merged_into}': it has no decision of its own; read the impact of '${o.merged_into}'.`)
    }
    const became = new Map((await ctx.repos.opportunities.lastBecame(o.event_id, decisionStatuses)).map((r) => [r.status as DecisionStatus, r.at]))
    const adoptedAt = became.get('adopted') ?? null
    const doneAt = became.get('done') ?? null
    let status: DecisionStatus
    if (args.decision) {
      status = args.decision
      if (!became.has(status)) {
        const other = status === 'adopted' ? doneAt : adoptedAt
        throw appError('Conflict', `Opportunity '${o.event_id}' has never become ${status} (it is ${o.status})` +
          (other ? `; it became ${status === 'adopted' ? 'done' : 'adopted'} at ${other.toISOString()}: ask for that decision, or leave decision out.` : ': there is no decision to measure from.'))
      }
    } else if (adoptedAt || doneAt) {
      status = doneAt && (!adoptedAt || doneAt >= adoptedAt) ? 'done' : 'adopted'
    } else {
      throw appError('Conflict', o.status === 'adopted' || o.status === 'done'
        ? `Opportunity '${o.event_id}' is ${o.status}, but its review history records no change to adopted or done: the moment of the decision is unknown.`
        : `Opportunity '${o.event_id}' is ${o.status} and has never been adopted or done: there is no decision to measure from. Its impact can be read once its status becomes adopted or done.`)
    }
    const at = became.get(status)!

    const n = args.days ?? IMPACT_DAYS.default
    const timezone = project.timezone
    const today = localDate(ctx.now(), timezone)
    const day = localDate(at, timezone)
    const beforeDays = dayRange(addDays(day, -1), n)
    const afterDays = dayRange(addDays(day, n), n)
    // A day has closed once today has begun: today is partial, and no later day has started.
    const closed = (d: string) => d < today
    const counted = { before: beforeDays.filter(closed), after: afterDays.filter(closed) }

    const sources = (args.metrics ?? DEFAULT_METRICS).map((metric) => ({ metric, ...sourceOf(metric) }))
    const last = counted.after.at(-1) ?? counted.before.at(-1)
    const rows = last ? await ctx.repos.events.dailyCounts(project.id, beforeDays[0]!, last, [...new Set(sources.map((s) => s.event))]) : []
    const counts = new Map(rows.map((r) => [`${r.day} ${r.event}`, r]))
    const valueOf = (date: string, s: MetricSource) => {
      const r = counts.get(`${date} ${s.event}`)
      return r ? (s.field === 'users' ? r.uniqueUsers : r.events) : 0
    }

    const metrics = sources.map((s) => {
      const before = counted.before.map((date) => ({ date, value: valueOf(date, s) }))
      const after = counted.after.map((date) => ({ date, value: valueOf(date, s) }))
      return { metric: s.metric, label: s.label, ...compareDays(before.map((d) => d.value), after.map((d) => d.value), n + 1), before, after }
    })

    const period = (days: readonly string[], countedDays: string[]) => ({ from: days[0]!, to: days.at(-1)!, days_counted: countedDays.length, days_left_out: days.length - countedDays.length })
    const before = period(beforeDays, counted.before)
    const after = period(afterDays, counted.after)
    const leftOut = after.days_left_out + before.days_left_out
    const which = adoptedAt && doneAt
      ? `It became both adopted (${adoptedAt.toISOString()}) and done (${doneAt.toISOString()}): measured from ${status}${args.decision ? ', as asked' : ', the later'}. `
      : `Measured from when it became ${status}. `
    const note =
      which +
      `Before: the ${plural(n, 'day')} ${before.from} to ${before.to}; after: the ${plural(n, 'day')} ${after.from} to ${after.to}. ` +
      `The decision day, ${day} (${timezone}), is in neither. ` +
      (leftOut === 0
        ? 'Every day of both periods has closed.'
        : `${plural(leftOut, 'day')} of the ${before.days_left_out ? 'periods' : 'after-period'} ${leftOut === 1 ? 'has' : 'have'} not closed yet and ${leftOut === 1 ? 'is' : 'are'} left out (today, ${today}, is partial)` +
          (after.days_counted === 0 ? ': there is no after-day to compare yet.' : '.'))

    return {
      event_id: o.event_id,
      status: o.status,
      timezone,
      today,
      decision: { status, at: at.toISOString(), day, adopted_at: adoptedAt?.toISOString() ?? null, done_at: doneAt?.toISOString() ?? null },
      days: n,
      before,
      after,
      metrics,
      note,
      caveat: IMPACT_CAVEAT,
    }
  },
})
