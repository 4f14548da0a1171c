import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Memory, MemoryFields } from '../schemas/memories.ts'

export default defineOperation({
  name: 'add_memory',
  title: 'Remember something about the project',
  description:
    'Store a memory for the project: a fact, decision or learning worth keeping (`content`, ≤ 8000 characters), with ' +
    'optional `tags` and `source`. Later found by list_memories and search_signals. Returns the memory with its id.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object(
    { content: MemoryFields.content, tags: Type.Optional(MemoryFields.tags), source: Type.Optional(MemoryFields.source) },
    { additionalProperties: false }
  ),
  output: Memory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
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
