// An example growthdesk tool plugin (docs/extending.md): an ordinary Fastify plugin, the
// module's default export, that adds two operations. Plain JavaScript: Node does not strip
// types in node_modules, so a published plugin ships JavaScript (write it in TypeScript and
// compile it, or use JSDoc as here).
import { defineOperation, StringEnum, Type } from 'growthdesk'

const STATUSES = ['pending', 'reviewing', 'contacted', 'adopted', 'ignored', 'done']

const countOpportunitiesByStatus = defineOperation({
  name: 'count_opportunities_by_status',
  title: 'Count opportunities by status',
  description:
    'How many growth opportunities of a project are in each pipeline status (pending, reviewing, contacted, adopted, ' +
    'ignored, done), optionally only those of one `type` or matching a text `q`. Returns {counts, total}. ' +
    'Needs review access (reviewer or owner).',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only opportunities of this type (e.g. potential_user).' })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only opportunities whose texts contain this (case-insensitive).' })),
  }, { additionalProperties: false }),
  output: Type.Object({
    counts: Type.Object(Object.fromEntries(STATUSES.map((s) => [s, Type.Integer({ minimum: 0 })])), { additionalProperties: false }),
    total: Type.Integer({ minimum: 0 }),
  }, { additionalProperties: false }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Every opportunity of the project', args: {} },
      { title: 'Only potential users that mention pricing', args: { type: 'potential_user', q: 'pricing' } },
    ],
    invalid: [
      { title: 'An empty type', args: { type: '' }, field: 'type' },
      { title: 'An argument the tool does not have', args: { status: 'pending' }, field: 'status' },
    ],
  },
  // Built on a tool there is: list_opportunities, called as the same caller in the same project
  // (its access checks included); `total` of a one-item page is the count.
  async handler(args, ctx) {
    const totals = await Promise.all(STATUSES.map(async (status) => {
      const page = await ctx.call('list_opportunities', { ...args, status, page_size: 1 })
      return page.total
    }))
    const counts = Object.fromEntries(STATUSES.map((s, i) => [s, totals[i]]))
    return { counts, total: totals.reduce((a, b) => a + b, 0) }
  },
})

const pendingDigest = defineOperation({
  name: 'pending_digest',
  title: 'Digest of opportunities waiting for review',
  description:
    'A short Markdown digest of the newest opportunities still pending review (at most `limit`, 1–10, default 5) and how ' +
    'many wait in all: paste it into a chat or a stand-up note. Returns {pending, markdown}. Needs review access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 5, description: 'How many opportunities to list (1–10).' })),
    style: Type.Optional(StringEnum(['bullets', 'numbered'], { default: 'bullets', description: 'A bulleted or a numbered list.' })),
  }, { additionalProperties: false }),
  output: Type.Object({
    pending: Type.Integer({ minimum: 0 }),
    markdown: Type.String(),
  }, { additionalProperties: false }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'The five newest', args: {} },
      { title: 'The three newest, numbered', args: { limit: 3, style: 'numbered' } },
    ],
    invalid: [
      { title: 'Too many', args: { limit: 50 }, field: 'limit' },
      { title: 'A style there is not', args: { style: 'table' }, field: 'style' },
    ],
  },
  async handler(args, ctx) {
    const limit = args.limit ?? 5
    const page = await ctx.call('list_opportunities', { status: 'pending', page_size: limit })
    const lines = page.items.map((item, i) =>
      `${args.style === 'numbered' ? `${i + 1}.` : '-'} **${item.contribution_type}**: ${item.key_information.replace(/\s+/g, ' ').slice(0, 160)} (\`${item.event_id}\`)`)
    const head = page.total === 0 ? 'Nothing waits for review.' : `${page.total} opportunit${page.total === 1 ? 'y waits' : 'ies wait'} for review.`
    return { pending: page.total, markdown: [head, ...lines].join('\n') }
  },
})

/** @param {import('fastify').FastifyInstance} app */
export default async function acmeGrowthdeskTools(app) {
  app.operations.add(countOpportunitiesByStatus)
  app.operations.add(pendingDigest)
}
