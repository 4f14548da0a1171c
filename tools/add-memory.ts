import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Memory, MemoryFields } from '../schemas/memories.ts'

export default defineOperation({
  name: 'add_memory',
  title: 'Remember something about the project',
  description:
    'Memory: store a fact, decision or learning about the project, with optional `tags` and `source`; list_memories ' +
    'and search_signals find it later.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object(
    { content: MemoryFields.content, tags: Type.Optional(MemoryFields.tags), source: Type.Optional(MemoryFields.source) },
    { additionalProperties: false }
  ),
  output: Memory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      {
        title: 'A learning, tagged, with where it came from',
        args: { content: 'Annual plans convert 2x better when the pricing page shows them first', tags: ['pricing', 'experiment'], source: 'A/B test, October' },
      },
      { title: 'Just the fact', args: { content: 'Our main competitor raised its prices by 20% in October' } },
    ],
    invalid: [
      { title: 'Nothing to remember', args: { tags: ['pricing'] }, field: 'content' },
      { title: 'A tag with a space', args: { content: 'Annual plans convert better', tags: ['annual plans'] }, field: 'tags[0]' },
      { title: 'More than 8000 characters', args: { content: 'x'.repeat(8001) }, field: 'content' },
      { title: 'An argument it does not take', args: { content: 'Annual plans convert better', pinned: true }, field: 'pinned' },
    ],
  },
  async handler(args, ctx) {
    return ctx.repos.memories.add({
      projectId: ctx.project.id,
      content: args.content,
      tags: args.tags ?? [],
      source: args.source ?? '',
      createdBy: ctx.principal.userId,
      now: ctx.now(),
    })
  },
})
