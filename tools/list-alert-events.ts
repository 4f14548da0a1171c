import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { Page, PageSize } from '../schemas/atoms.ts'
import { AlertEventPage, AlertId } from '../schemas/alerts.ts'
import { toAlertEvent } from './alert-records.ts'

export default defineOperation({
  name: 'list_alert_events',
  title: 'Alert firings and recoveries',
  description:
    'Metrics alerts\' log, newest first: each firing (triggered) and recovery (resolved) with its day, value and ' +
    'what it was held against (`detail`: the threshold, or the expected range and method). Optional `alert_id`; ' +
    '`page`/`page_size`.',
  scope: 'project',
  toolset: 'metrics',
  role: 'viewer',
  input: Type.Object({
    alert_id: Type.Optional(AlertId),
    page: Type.Optional(Page),
    page_size: Type.Optional(PageSize),
  }, { additionalProperties: false }),
  output: AlertEventPage,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'The latest firings and recoveries', args: {} },
      { title: 'One alert’s history, 50 a page', args: { alert_id: 'alr_4Fh8Kd2Lq6Wm1Zx9Pv3B', page_size: 50 } },
    ],
    invalid: [
      { title: 'More than 100 a page', args: { page_size: 101 }, field: 'page_size' },
      { title: 'Not an alert id', args: { alert_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: 'alert_id' },
    ],
  },
  async handler(args, ctx) {
    const page = args.page ?? 1
    const pageSize = args.page_size ?? 20
    if (args.alert_id && !(await ctx.repos.alerts.find(ctx.project.id, args.alert_id))) {
      throw appError('NotFound', `Alert '${args.alert_id}' was not found in project '${ctx.project.slug}'.`)
    }
    const { items, total } = await ctx.repos.alerts.events(ctx.project.id, { alertId: args.alert_id, limit: pageSize, offset: (page - 1) * pageSize })
    return { items: items.map(toAlertEvent), page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize) }
  },
})
