import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { roleAtLeast } from '../core/access.ts'
import { normalizeFilters, SaveViewResult, ViewFilters, ViewName } from '../schemas/saved-views.ts'

export default defineOperation({
  name: 'save_view',
  title: 'Save a view of the opportunities',
  description:
    'Saved views of opportunities: save listing `filters` (list_opportunities\' filters, no paging) under a `name`, ' +
    'for you or `shared` with the project (sharing needs review access). Your view of the same name (any case) is ' +
    'replaced, `shared` too (default false). Returns the view; `created` false when it replaced one.',
  scope: 'project',
  // A view changes no opportunity: any member keeps their own; sharing one needs review access (below).
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object(
    { name: ViewName, filters: ViewFilters, shared: Type.Optional(Type.Boolean({ description: 'Show it to every member of the project (needs review access); default false.' })) },
    { additionalProperties: false }
  ),
  output: SaveViewResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Partnership leads waiting for review, shared with the project', args: { name: 'Pending partnerships', filters: { type: 'partnership', status: 'pending' }, shared: true } },
      { title: 'A view of your own: today’s useful ones that mention pricing', args: { name: 'Pricing today', filters: { date: 'today', evaluation: 'useful', q: 'pricing' } } },
      { title: 'Every opportunity (no filter)', args: { name: 'Everything', filters: {} } },
    ],
    invalid: [
      { title: 'A status that does not exist', args: { name: 'Open ones', filters: { status: 'open' } }, field: 'filters.status' },
      { title: 'A page is not a filter', args: { name: 'Second page', filters: { page: 2 } }, field: 'filters.page' },
      { title: 'No filters', args: { name: 'Pending partnerships' }, field: 'filters' },
      { title: 'A name over 80 characters', args: { name: 'x'.repeat(81), filters: {} }, field: 'name' },
      { title: 'A name of spaces only', args: { name: '   ', filters: {} }, field: 'name' },
    ],
  },
  async handler(args, ctx) {
    // A viewer may save, but a read-only key writes nothing (the console and other keys may).
    if (ctx.principal.readOnly) throw appError('Forbidden', 'This key is read-only: it cannot save views.')
    const name = args.name.trim()
    if (name === '') throw appError('InvalidArguments', 'A view needs a name: `name` is blank.', [{ path: 'name', message: 'must not be blank' }])
    const shared = args.shared ?? false
    if (shared && !roleAtLeast(ctx.project.role, 'reviewer')) {
      throw appError('ReviewAccessRequired', `Sharing a view with project '${ctx.project.slug}' needs review access; your access is ${ctx.project.role}. Save it unshared.`)
    }
    const { view, created } = await ctx.repos.savedViews.save({
      projectId: ctx.project.id,
      userId: ctx.principal.userId,
      name,
      filters: normalizeFilters(args.filters),
      shared,
      now: ctx.now(),
    })
    return { ...view, created }
  },
})
