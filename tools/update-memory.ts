import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { Memory, MemoryFields, MemoryId } from '../schemas/memories.ts'
import { writableMemory } from './memory-access.ts'

export const MemoryPatch = Type.Partial(Type.Object(MemoryFields), { additionalProperties: false })

export default defineOperation({
  name: 'update_memory',
  title: 'Update a memory',
  description:
    'Memory update: change a memory\'s `content`, `tags` (replaces the list) and/or `source` by its id; only the ' +
    'fields you send change.',
  scope: 'workspace',
  role: 'reviewer',
  input: Type.Object({ id: MemoryId, ...MemoryPatch.properties }, { additionalProperties: false }),
  output: Memory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Replace the tags', args: { id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k', tags: ['pricing', 'retention'] } },
      {
        title: 'Correct the content and say where it came from',
        args: { id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k', content: 'Annual plans convert 2.3x better when shown first (final numbers)', source: 'A/B test report, November' },
      },
    ],
    invalid: [
      { title: 'Nothing to change', args: { id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k' }, field: '' },
      { title: 'Not a memory id', args: { id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', content: 'Annual plans convert better' }, field: 'id' },
      { title: 'A source over 200 characters', args: { id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k', source: 'x'.repeat(201) }, field: 'source' },
    ],
  },
  async handler(args, ctx) {
    const { id, ...change } = args
    if (Object.keys(change).length === 0) {
      throw appError('InvalidArguments', 'Send at least one of content, tags or source.', [{ path: '', message: 'must have at least one of content, tags, source' }])
    }
    await writableMemory(ctx, id)
    const memory = await ctx.repos.memories.update(id, change, ctx.now())
    if (!memory) throw appError('NotFound', `Memory '${id}' was not found.`)
    return memory
  },
})
