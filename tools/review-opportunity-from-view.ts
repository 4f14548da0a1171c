// The review behind the buttons of the MCP App board (ui://growthdesk/board, routes/mcp-apps.ts).
// MCP Apps lets a view call only the tools whose visibility includes "app", and hosts keep a tool
// listed as app-only away from the model: this one is that tool, and nothing more than
// review_opportunity called as the same caller, so the validation, access checks, history and
// webhooks are review_opportunity's own, on every surface.
import { Type, type Static } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { EventId, ReviewFields, ReviewPrecondition, ReviewResult } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'review_opportunity_from_view',
  title: 'Review a growth opportunity from the board view',
  description:
    'Growth opportunity review behind the buttons of the MCP App board (ui://growthdesk/board). App-only (visibility ' +
    '["app"]): hosts keep it from the model, and agents call review_opportunity, which this is: the same arguments, ' +
    'checks, history, webhooks and result. Needs review access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ event_id: EventId, ...ReviewFields, ...ReviewPrecondition }, { additionalProperties: false }),
  output: ReviewResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  ui: { resourceUri: 'ui://growthdesk/board', visibility: ['app'] },
  examples: {
    valid: [
      { title: 'The board’s Contacted button', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', status: 'contacted' } },
      { title: 'The board’s Useful button, pressed again to clear it', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: '' } },
      { title: 'The board’s note, saved', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', note: 'Asked for their pricing page feedback' } },
      { title: 'The board’s Done button on the card it shows at version 1', args: { event_id: 'opp_7Rc2Wm9Hx4Lq1Tz8Fb5n', status: 'done', if_version: 1 } },
    ],
    invalid: [
      { title: 'A status that does not exist', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', status: 'open' }, field: 'status' },
      { title: 'A note over 2000 characters', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', note: 'x'.repeat(2001) }, field: 'note' },
      { title: 'Not an opportunity id', args: { event_id: '42', status: 'done' }, field: 'event_id' },
      { title: 'Nothing to change', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: '' },
      { title: 'A version below 1', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', status: 'done', if_version: 0 }, field: 'if_version' },
    ],
  },
  async handler(args, ctx) {
    return await ctx.call('review_opportunity', args) as Static<typeof ReviewResult>
  },
})
