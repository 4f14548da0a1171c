// Saved views (issue 28): a named set of the listing's filters, a member's own or shared with
// the project. The filters are list_opportunities' own, without paging: a filter added to the
// listing (OpportunityFilters) is a filter a view can save, with no change here.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Member, OpportunityFilters } from './opportunities.ts'
import { Timestamp } from './atoms.ts'

/** The listing's arguments that page rather than filter: a view keeps none of them. */
const paging = ['page', 'page_size', 'after'] as const
type Filters = Omit<typeof OpportunityFilters, (typeof paging)[number]>

/** A filter's schema without its `default`: validation would otherwise fill every `all` in. */
function withoutDefault<T extends TSchema>(schema: T): T {
  const copy = { ...schema }
  delete copy.default
  return copy
}

const filterNames = Object.keys(OpportunityFilters).filter((name) => !(paging as readonly string[]).includes(name))

export const ViewFilters = Type.Object(
  Object.fromEntries(filterNames.map((name) => [name, withoutDefault(OpportunityFilters[name as keyof Filters])])) as Filters,
  { additionalProperties: false, description: 'list_opportunities\' filters (not page, page_size or after).' }
)
export type ViewFilters = Static<typeof ViewFilters>

/** The names of the filters a view keeps, in the listing's order. */
export const viewFilterNames: readonly string[] = filterNames

/**
 * The filters as a view keeps them: only those that narrow the listing. A filter at its default
 * (`all`) filters nothing and is left out, so `{status: "all"}` and `{}` are one view.
 */
export function normalizeFilters(filters: Record<string, unknown>): ViewFilters {
  const defaults = OpportunityFilters as Record<string, { default?: unknown }>
  return Object.fromEntries(
    filterNames.filter((name) => filters[name] !== undefined && filters[name] !== defaults[name]?.default).map((name) => [name, filters[name]])
  ) as ViewFilters
}

/** Do two sets of filters choose the same opportunities (the same filters once normalized)? */
export function sameFilters(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const key = (f: Record<string, unknown>) => JSON.stringify(Object.entries(normalizeFilters(f)).sort(([x], [y]) => (x < y ? -1 : 1)))
  return key(a) === key(b)
}

export const ViewId = Type.String({ pattern: '^view_[0-9A-Za-z]{1,40}$' })

export const ViewName = Type.String({
  minLength: 1,
  maxLength: 80,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description: '1–80 characters, on one line; surrounding spaces are trimmed. Your names are unique in a project, in any case.',
})

export const SavedView = Type.Object({
  view_id: Type.String(),
  name: Type.String(),
  filters: ViewFilters,
  shared: Type.Boolean({ description: 'Every member of the project sees it.' }),
  owner: Member,
  mine: Type.Boolean({ description: 'You saved it.' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type SavedView = Static<typeof SavedView>

export const SaveViewResult = Type.Composite([SavedView, Type.Object({ created: Type.Boolean({ description: 'false when it replaced your view of that name' }) })])
