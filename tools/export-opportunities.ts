import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { localDate } from '../core/time.ts'
import { OpportunityFilters, type Opportunity } from '../schemas/opportunities.ts'
import { listingWho } from './triage-args.ts'

const { page: _page, page_size: _pageSize, after: _after, ...filters } = OpportunityFilters

/**
 * The opportunity listing's export: every opportunity matching the same filters as
 * list_opportunities (no page), newest first, read in batches as the caller consumes them.
 * Not a tool (an agent pages with list_opportunities): the REST listing's CSV answer and the
 * console's download reach it, with list_opportunities' access (review access).
 */
export default defineOperation({
  name: 'export_opportunities',
  title: 'Export growth opportunities',
  description:
    'Every growth opportunity of a project matching `type`, `date`, `evaluation`, `status`, `q`, `tag` and `assignee` (as list_opportunities ' +
    'filters them), newest first, without pages: the CSV export of the listing. Needs review access (reviewer or owner).',
  scope: 'project',
  role: 'reviewer',
  tool: false,
  input: Type.Object(filters, { additionalProperties: false }),
  output: Type.Object({
    project: Type.String({ description: 'The project slug.' }),
    date: Type.String({ description: 'Today in the project time zone (for the file name).' }),
    batches: Type.Unsafe<AsyncIterable<Opportunity[]>>({ description: 'The opportunities, in batches read one at a time as they are consumed.' }),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Every opportunity evaluated useful', args: { evaluation: 'useful' } },
      { title: 'Today’s pending partnership leads that mention pricing', args: { type: 'partnership', date: 'today', status: 'pending', q: 'pricing' } },
    ],
    invalid: [
      { title: 'A page: the export has none', args: { page: 2 }, field: 'page' },
      { title: 'A date filter that does not exist', args: { date: 'yesterday' }, field: 'date' },
    ],
  },
  async handler(args, ctx) {
    const timeZone = ctx.project.timezone
    return {
      project: ctx.project.slug,
      date: localDate(ctx.now(), timeZone),
      batches: ctx.repos.opportunities.walk(ctx.project.id, {
        type: args.type ?? 'all',
        status: args.status ?? 'all',
        evaluation: args.evaluation ?? 'all',
        receivedOn: args.date === 'today' ? { day: localDate(ctx.now(), timeZone), timeZone } : undefined,
        q: args.q,
        ...listingWho(args, ctx),
      }),
    }
  },
})
