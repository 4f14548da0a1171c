// Revoking a key: the caller's own keys only (an operation for the console and the CLI, not a tool).
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'

export default defineOperation({
  name: 'revoke_key',
  title: 'Revoke a key',
  description: 'Revoke one of your keys by its id (key_…): it stops working at once, on every instance. Revoking it again changes nothing.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  tool: false,
  input: Type.Object({ id: Type.String({ pattern: '^key_[0-9A-Za-z]{1,40}$', description: 'The key id (key_…).' }) }, { additionalProperties: false }),
  output: Type.Object({ id: Type.String(), revoked: Type.Boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  examples: {
    valid: [{ title: 'Revoke a key by its id', args: { id: 'key_6Gr3Ue8Bn0Ai5Yo2Vx9q' } }],
    invalid: [
      { title: 'No key', args: {}, field: 'id' },
      { title: 'The key itself instead of its id', args: { id: 'gds_0123456789abcdef' }, field: 'id' },
    ],
  },
  async handler(args, ctx) {
    if (ctx.principal.kind !== 'session' && ctx.principal.kind !== 'operator') {
      throw appError('Forbidden', 'Keys are revoked in the console or with the CLI, not with another key.')
    }
    if (!(await ctx.repos.apiKeys.revoke(args.id, ctx.now(), ctx.principal.userId))) throw appError('NotFound', `No key with the id ${args.id}.`)
    return { id: args.id, revoked: true }
  },
})
