import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Page, PageOf, PageSize } from '../schemas/atoms.ts'
import { Memory } from '../schemas/memories.ts'

export default defineOperation({
  name: 'list_memories',
  title: 'List project memories',
  description:
    'Memories of a project (facts, decisions, learnings), newest first; narrow with `query` (full-text, web-search ' +
    'syntax) and/or `tag`, page with `page`/`page_size`.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object(
    {
      query: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
      page: Type.Optional(Page),
      page_size: Type.Optional(PageSize),
    },
    { additionalProperties: false }
  ),
  output: PageOf(Memory),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'The newest memories', args: {} },
      { title: 'Memories tagged pricing that mention annual plans, 10 a page', args: { query: 'annual plan', tag: 'pricing', page_size: 10 } },
    ],
    invalid: [
      { title: 'Page 0', args: { page: 0 }, field: 'page' },
      { title: 'An empty tag', args: { tag: '' }, field: 'tag' },
      { title: 'Several tags: it takes one', args: { tags: ['pricing', 'churn'] }, field: 'tags' },
    ],
  },
  async handler(args, ctx) {
    const page = args.page ?? 1
    const pageSize = args.page_size ?? 20
    const { items, total } = await ctx.repos.memories.list(ctx.project.id, { query: args.query, tag: args.tag, page, pageSize })
    return { items, page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize) }
  },
})
