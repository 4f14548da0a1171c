import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { MAX_ALERTS_PER_PROJECT } from '../core/alerts.ts'
import { Alert, AlertFields } from '../schemas/alerts.ts'
import { checkDefinition, toAlert } from './alert-records.ts'

export default defineOperation({
  name: 'create_alert',
  title: 'Create an alert on a metric',
  description:
    'Metrics alerts: create one on a daily metric (registrations, daily_users, an event\'s event_count or event_users) or the review queue ' +
    '(pending_opportunities, oldest_pending_age_hours): `above` or `below` a `threshold`, or `anomaly` (the day far ' +
    'outside its last 4–8 same weekdays; daily metrics only). Evaluated when the numbers change and when a day closes in ' +
    `the project's zone; each firing and recovery is logged (list_alert_events) and sent as alert.triggered / alert.resolved webhooks. At most ${MAX_ALERTS_PER_PROJECT} per project. Owner only.`,
  scope: 'project',
  toolset: 'metrics',
  role: 'owner',
  input: Type.Object({
    name: AlertFields.name,
    metric: AlertFields.metric,
    event: Type.Optional(AlertFields.event),
    condition: AlertFields.condition,
    threshold: Type.Optional(AlertFields.threshold),
  }, { additionalProperties: false }),
  output: Alert,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      { title: 'Daily users fell below 50', args: { name: 'Daily users below 50', metric: 'daily_users', condition: 'below', threshold: 50 } },
      { title: 'Sign-ups far off their usual weekdays', args: { name: 'Sign-ups unusual', metric: 'registrations', condition: 'anomaly' } },
      { title: 'More than 20 exports a day', args: { name: 'Export spike', metric: 'event_count', event: 'export', condition: 'above', threshold: 20 } },
      { title: 'The review queue piles up', args: { name: 'Queue over 30', metric: 'pending_opportunities', condition: 'above', threshold: 30 } },
    ],
    invalid: [
      { title: 'A threshold alert without its threshold', args: { name: 'Low sign-ups', metric: 'registrations', condition: 'below' }, field: 'threshold' },
      { title: 'An event metric without its event', args: { name: 'Exports', metric: 'event_users', condition: 'above', threshold: 5 }, field: 'event' },
      { title: 'An event on a metric that names none', args: { name: 'Daily users', metric: 'daily_users', event: 'export', condition: 'above', threshold: 5 }, field: 'event' },
      { title: 'A threshold with anomaly', args: { name: 'Odd days', metric: 'daily_users', condition: 'anomaly', threshold: 5 }, field: 'threshold' },
      { title: 'Anomaly on the review queue', args: { name: 'Odd queue', metric: 'pending_opportunities', condition: 'anomaly' }, field: 'condition' },
      { title: 'A metric that does not exist', args: { name: 'Revenue', metric: 'revenue', condition: 'above', threshold: 5 }, field: 'metric' },
      { title: 'A negative threshold', args: { name: 'Daily users', metric: 'daily_users', condition: 'below', threshold: -1 }, field: 'threshold' },
    ],
  },
  async handler(args, ctx) {
    const name = args.name.trim()
    if (name === '') throw appError('InvalidArguments', 'name: must not be blank.', [{ path: 'name', message: 'must not be blank' }])
    const definition = { metric: args.metric, event: args.event ?? null, condition: args.condition, threshold: args.threshold ?? null }
    checkDefinition(definition)
    const row = await ctx.repos.alerts.create({ projectId: ctx.project.id, name, ...definition, createdBy: ctx.principal.userId, now: ctx.now() }, MAX_ALERTS_PER_PROJECT)
    if (!row) throw appError('Conflict', `Project '${ctx.project.slug}' has ${MAX_ALERTS_PER_PROJECT} alerts, the most a project may have: delete one first.`)
    return toAlert(row)
  },
})
