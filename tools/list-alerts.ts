import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Alert } from '../schemas/alerts.ts'
import { toAlert } from './alert-records.ts'

export default defineOperation({
  name: 'list_alerts',
  title: 'List the project’s alerts',
  description:
    'Metrics alerts of the project, oldest first, each with its definition and its state now (ok or firing), the value its last ' +
    'evaluation judged and when. The firings and recoveries themselves: list_alert_events.',
  scope: 'project',
  toolset: 'metrics',
  role: 'viewer',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ items: Type.Array(Alert) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'The project’s alerts and their state', args: {} }],
    invalid: [{ title: 'A filter it does not take', args: { state: 'firing' }, field: 'state' }],
  },
  async handler(_args, ctx) {
    return { items: (await ctx.repos.alerts.list(ctx.project.id)).map(toAlert) }
  },
})
