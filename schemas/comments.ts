// Comments on an opportunity: threads one level deep (a comment and its replies), each written,
// edited and deleted by its author (docs/design.md, "Comments").
import { Type, type Static } from '@sinclair/typebox'
import { NullableTimestamp, Timestamp } from './atoms.ts'
import { Member } from './opportunities.ts'

/** The longest body, in characters (Unicode code points, as Ajv's maxLength and PostgreSQL's char_length count them). */
export const MAX_COMMENT_CHARS = 4000

export const CommentId = Type.String({ pattern: '^cmt_[0-9A-Za-z]{1,40}$', description: 'The comment id (cmt_…).' })

export const CommentBody = Type.String({
  minLength: 1,
  maxLength: MAX_COMMENT_CHARS,
  description: 'The text: 1–4000 characters, not only white space; kept as sent (not trimmed).',
})

export const Comment = Type.Object({
  comment_id: Type.String(),
  event_id: Type.String({ description: 'The opportunity it is on.' }),
  parent_id: Type.Union([Type.String(), Type.Null()], { description: 'The top-level comment it answers; null for a top-level comment.' }),
  author: Type.Union([Member, Type.Null()], { description: 'null once the author\'s account is gone.' }),
  body: Type.String({ description: '"" once deleted.' }),
  created_at: Timestamp(),
  edited_at: NullableTimestamp('When its author last edited it.'),
  deleted: Type.Boolean({ description: 'Deleted: kept, without its text, while replies to it are shown.' }),
})
export type Comment = Static<typeof Comment>

export const CommentThread = Type.Object({
  event_id: Type.String(),
  items: Type.Array(Comment, { description: 'Thread order: each top-level comment, oldest first, followed by its replies, oldest first.' }),
})
