import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { OpportunityFilters, OpportunityPage } from '../schemas/opportunities.ts'
import { localDate } from '../core/time.ts'

export default defineOperation({
  name: 'list_opportunities',
  title: 'List growth opportunities',
  description:
    'List the growth opportunities of a project, newest first, with their review state. Filter by `type`, `date` ' +
    '(`today` in the project time zone), `evaluation` and `status`; page with `page` and `page_size` (1–100, default 20). ' +
    'Returns {items, page, page_size, total, total_pages}. Needs review access (reviewer or owner).',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object(OpportunityFilters, { additionalProperties: false }),
  output: OpportunityPage,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async handler(args, ctx) {
    const page = args.page ?? 1
    const pageSize = args.page_size ?? 20
    const timeZone = ctx.project.timezone
    const { items, total } = await ctx.repos.opportunities.list(ctx.project.id, {
      type: args.type ?? 'all',
      status: args.status ?? 'all',
      evaluation: args.evaluation ?? 'all',
      receivedOn: args.date === 'today' ? { day: localDate(ctx.now(), timeZone), timeZone } : undefined,
      page,
      pageSize,
    })
    return { items, page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize) }
  },
})
