// The errors of the comment tools, one wording on every surface.
import { appError } from '../core/errors.ts'
import type { ProjectContext } from '../core/operations.ts'
import type { AddOutcome, ChangeOutcome } from '../db/repositories/comments.ts'

/** A body of only white space says nothing: refused like a schema violation (a 400 naming `body`). */
export function requireText(body: string) {
  if (body.trim() === '') {
    throw appError('InvalidArguments', 'Invalid arguments — body: must contain more than white space.', [{ path: 'body', message: 'must contain more than white space' }])
  }
}

function merged(eventId: string, into: string) {
  return appError('Conflict', `Opportunity '${eventId}' is merged into '${into}': its comments are read-only. Comment on '${into}', or unmerge it first.`)
}

/** The error of an add that changed nothing. */
export function addRefusal(outcome: Exclude<AddOutcome, { kind: 'added' }>, args: { event_id: string; parent_id?: string }, ctx: ProjectContext): Error {
  const where = `in project '${ctx.project.slug}'`
  switch (outcome.kind) {
    case 'missing': return appError('NotFound', `Opportunity '${args.event_id}' was not found ${where}.`)
    case 'merged': return merged(outcome.eventId, outcome.into)
    case 'parent_missing': return appError('NotFound', `Comment '${args.parent_id}' (parent_id) was not found ${where}.`)
    case 'parent_elsewhere':
      return appError('InvalidArguments', `Comment '${args.parent_id}' is on another opportunity than '${args.event_id}': a reply goes on its parent's opportunity.`, [
        { path: 'parent_id', message: `is a comment on another opportunity than ${args.event_id}` },
      ])
    case 'parent_deleted': return appError('Conflict', `Comment '${args.parent_id}' was deleted: it takes no more replies.`)
  }
}

/** The error of an edit or a deletion that changed nothing. */
export function changeRefusal(outcome: Exclude<ChangeOutcome, { kind: 'changed' }>, commentId: string, verb: 'edit' | 'delete', ctx: ProjectContext): Error {
  switch (outcome.kind) {
    case 'missing': return appError('NotFound', `Comment '${commentId}' was not found in project '${ctx.project.slug}'.`)
    case 'merged': return merged(outcome.eventId, outcome.into)
    case 'deleted': return appError('Conflict', `Comment '${commentId}' was deleted already: nothing to ${verb}.`)
    case 'forbidden':
      return appError('Forbidden', verb === 'edit'
        ? `Comment '${commentId}' is someone else's: only its author edits it.`
        : `Comment '${commentId}' is someone else's: only its author, or an owner of project '${ctx.project.slug}', deletes it.`)
  }
}
