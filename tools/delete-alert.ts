import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { AlertId } from '../schemas/alerts.ts'

export default defineOperation({
  name: 'delete_alert',
  title: 'Delete an alert',
  description: 'Metrics alerts: delete one, with its log of firings and recoveries (webhook messages already queued still go out). Owner only.',
  scope: 'project',
  toolset: 'metrics',
  role: 'owner',
  input: Type.Object({ alert_id: AlertId }, { additionalProperties: false }),
  output: Type.Object({ alert_id: Type.String(), deleted: Type.Literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  examples: {
    valid: [{ title: 'Delete an alert and its log', args: { alert_id: 'alr_7Tn2Bc5Vx9Lk3Hd8Qw1R' } }],
    invalid: [
      { title: 'No alert', args: {}, field: 'alert_id' },
      { title: 'Not an alert id', args: { alert_id: 'ale_7Tn2Bc5Vx9Lk3Hd8Qw1R' }, field: 'alert_id' },
    ],
  },
  async handler(args, ctx) {
    if (!(await ctx.repos.alerts.remove(ctx.project.id, args.alert_id))) throw appError('NotFound', `Alert '${args.alert_id}' was not found in project '${ctx.project.slug}'.`)
    return { alert_id: args.alert_id, deleted: true as const }
  },
})
