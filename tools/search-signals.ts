import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { roleAtLeast } from '../core/access.ts'
import { Timestamp } from '../schemas/atoms.ts'
import { SignalKind } from '../schemas/signals.ts'

export default defineOperation({
  name: 'search_signals',
  title: 'Search signals',
  description:
    'Signals search: ranked full-text search over the project\'s growth opportunities and memories (web-search syntax: ' +
    'words, "phrase", -excluded, or). Opportunities need review access.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object(
    {
      query: Type.String({ minLength: 1, maxLength: 500 }),
      kinds: Type.Optional(Type.Array(SignalKind, { minItems: 1, uniqueItems: true })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    },
    { additionalProperties: false }
  ),
  output: Type.Object({
    query: Type.String(),
    searched: Type.Array(SignalKind),
    results: Type.Array(
      Type.Object({ kind: SignalKind, id: Type.String(), title: Type.String(), snippet: Type.String(), rank: Type.Number(), at: Timestamp() })
    ),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Opportunities and memories about pricing', args: { query: 'pricing' } },
      { title: 'Memories only: a phrase, without a word, the first 5', args: { query: '"annual plan" -discount', kinds: ['memory'], limit: 5 } },
    ],
    invalid: [
      { title: 'No query', args: { kinds: ['memory'] }, field: 'query' },
      { title: 'More than 50 results', args: { query: 'pricing', limit: 51 }, field: 'limit' },
      { title: 'A kind that is not searched', args: { query: 'pricing', kinds: ['event'] }, field: 'kinds[0]' },
    ],
  },
  async handler(args, ctx) {
    const wanted: SignalKind[] = args.kinds ?? ['opportunity', 'memory']
    const searched = wanted.filter((k) => k === 'memory' || roleAtLeast(ctx.project.role, 'reviewer'))
    const results = await ctx.repos.signals.search(ctx.project.id, args.query, searched, args.limit ?? 10)
    return { query: args.query, searched, results }
  },
})
