import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { needsEvent } from '../core/alerts.ts'
import { Alert, AlertFields, AlertId } from '../schemas/alerts.ts'
import { checkDefinition, toAlert } from './alert-records.ts'

export default defineOperation({
  name: 'update_alert',
  title: 'Change an alert',
  description:
    'Metrics alerts: change one\'s `name`, `metric`, `event`, `condition`, `threshold` and/or `enabled` (false: not evaluated); only the ' +
    'fields you send change. A metric that names no event drops the event; anomaly drops the threshold. Its state stays ' +
    'until the next evaluation. Owner only.',
  scope: 'project',
  toolset: 'metrics',
  role: 'owner',
  input: Type.Object({
    alert_id: AlertId,
    name: Type.Optional(AlertFields.name),
    metric: Type.Optional(AlertFields.metric),
    event: Type.Optional(AlertFields.event),
    condition: Type.Optional(AlertFields.condition),
    threshold: Type.Optional(AlertFields.threshold),
    enabled: Type.Optional(AlertFields.enabled),
  }, { additionalProperties: false }),
  output: Alert,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'A new threshold', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B', threshold: 40 } },
      { title: 'Pause it', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B', enabled: false } },
      { title: 'Watch for anomalies instead', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B', condition: 'anomaly', name: 'Daily users unusual' } },
    ],
    invalid: [
      { title: 'Nothing to change', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B' }, field: '' },
      { title: 'A threshold with anomaly', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B', condition: 'anomaly', threshold: 3 }, field: 'threshold' },
      { title: 'enabled as text', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B', enabled: 'no' }, field: 'enabled' },
      { title: 'Not an alert id', args: { alert_id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', enabled: false }, field: 'alert_id' },
    ],
  },
  async handler(args, ctx) {
    const { alert_id: id, ...change } = args
    if (Object.keys(change).length === 0) {
      throw appError('InvalidArguments', 'Send at least one of name, metric, event, condition, threshold or enabled.', [{ path: '', message: 'must have at least one of name, metric, event, condition, threshold, enabled' }])
    }
    if (change.name !== undefined) {
      change.name = change.name.trim()
      if (change.name === '') throw appError('InvalidArguments', 'name: must not be blank.', [{ path: 'name', message: 'must not be blank' }])
    }
    // What the arguments alone refuse, before any database work.
    if (change.condition === 'anomaly' && change.threshold !== undefined) checkDefinition({ metric: 'daily_users', event: null, condition: 'anomaly', threshold: change.threshold })
    if (change.metric !== undefined && change.event !== undefined) checkDefinition({ metric: change.metric, event: change.event, condition: 'above', threshold: 1 })
    const row = await ctx.repos.alerts.update(ctx.project.id, id, change, ctx.now())
    if (row) return toAlert(row)
    // Nothing changed: say why, from the alert as it is (missing, or the definition it would become).
    const stored = await ctx.repos.alerts.find(ctx.project.id, id)
    if (!stored) throw appError('NotFound', `Alert '${id}' was not found in project '${ctx.project.slug}'.`)
    const metric = change.metric ?? stored.metric
    const condition = change.condition ?? stored.condition
    checkDefinition({
      metric,
      condition,
      event: change.event ?? (needsEvent(metric) ? stored.event : null),
      threshold: change.threshold ?? (condition === 'anomaly' ? null : stored.threshold),
    })
    throw appError('Conflict', `Alert '${id}' changed while it was being updated: read it again and retry.`)
  },
})
