// What the triage tools (tags, assignees) and the listing's `tag` and `assignee` filters share:
// a tag name's schema and its checks, the arguments' meaning, and the refusals they answer.
import { Type } from '@sinclair/typebox'
import { appError } from '../core/errors.ts'
import type { ProjectContext } from '../core/operations.ts'

/** A tag's name: 1–40 characters once trimmed, no control characters; any case names the same tag. */
export const TagName = Type.String({
  minLength: 1,
  maxLength: 40,
  pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$',
  description: 'A tag name: 1–40 characters (trimmed), any case names the same tag.',
})

/** A list of tag names to add or remove. */
export const TagNames = (what: string) => Type.Array(TagName, { minItems: 1, maxItems: 20, description: what })

/** The names trimmed, each blank one a 400 naming its place; the first spelling of a name (any case) kept once. */
export function tagNames(names: string[] | undefined, path: string): string[] {
  const out = new Map<string, string>()
  for (const [i, raw] of (names ?? []).entries()) {
    const name = raw.trim()
    if (name === '') throw appError('InvalidArguments', `A tag name must not be blank: ${path}[${i}] is.`, [{ path: `${path}[${i}]`, message: 'must not be blank' }])
    if (!out.has(name.toLowerCase())) out.set(name.toLowerCase(), name)
  }
  return [...out.values()]
}

/** One tag name trimmed (a 400 naming `path` when blank). */
export function tagName(raw: string, path: string): string {
  const name = raw.trim()
  if (name === '') throw appError('InvalidArguments', `A tag name must not be blank: ${path} is.`, [{ path, message: 'must not be blank' }])
  return name
}

/** The listing's `tag` and `assignee` filters as the repository takes them (`me`: the caller; `none`: no one). */
export function listingWho(args: { tag?: string; assignee?: string }, ctx: ProjectContext): { tag?: string; assignee?: string | null } {
  const out: { tag?: string; assignee?: string | null } = {}
  if (args.tag !== undefined) out.tag = args.tag.trim()
  if (args.assignee !== undefined) {
    const who = args.assignee.trim()
    out.assignee = who === 'none' ? null : who === 'me' ? ctx.principal.userId : who
  }
  return out
}

/** The `conflict` of a change to a merged opportunity. */
export function mergedConflict(eventId: string, into: string) {
  return appError('Conflict', `Opportunity '${eventId}' is merged into ${into}; unmerge it first (or change ${into}).`, [{ path: 'event_id', message: `is merged into ${into}` }])
}
