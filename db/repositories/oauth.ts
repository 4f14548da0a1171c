// OAuth 2.1 state: clients, grants (consents), single-use codes, rotating refresh tokens.
// Every secret is stored as its SHA-256 only, like API keys.
import { and, desc, eq, gt, isNull, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { apiKeys, oauthClients, oauthCodes, oauthGrants, oauthRefreshTokens } from '../schema.ts'
import { newId } from '../ids.ts'
import { generateSecret, hashKey } from '../keys.ts'
import { createApiKeysRepository } from './api-keys.ts'
import { SettingsCache } from '../settings-cache.ts'

export const ACCESS_TOKEN_TTL_S = 3600
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600
const CODE_TTL_S = 300
/**
 * A rotated refresh token still works this long after its first use: a client that lost the
 * answer of a refresh (a race between two requests, a dropped connection) retries with the token
 * it has and gets a fresh pair instead of losing the grant. The pair issued before is withdrawn
 * then (its access token revoked, its refresh token superseded): a grant never has two live
 * chains. After the window, reuse revokes the grant, and so does presenting a superseded token.
 */
export const REFRESH_REUSE_GRACE_S = 60

export type OAuthClient = typeof oauthClients.$inferSelect

const later = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000)

export function createOAuthRepository(db: Queryable, cache = new SettingsCache()) {
  /** Access token (1 h) and refresh token (30 days) for a grant, inside the caller's transaction. */
  async function issueTokens(tx: Queryable, grant: { id: string; userId: string; workspaceId: string }, now: Date) {
    const { key: accessToken } = await createApiKeysRepository(tx).create({
      workspaceId: grant.workspaceId,
      userId: grant.userId,
      kind: 'oauth',
      name: 'OAuth access token',
      expiresAt: later(now, ACCESS_TOKEN_TTL_S),
      grantId: grant.id,
    })
    const refreshToken = generateSecret('gdr_')
    await tx.insert(oauthRefreshTokens).values({ hash: hashKey(refreshToken), grantId: grant.id, createdAt: now, expiresAt: later(now, REFRESH_TOKEN_TTL_S) })
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_S }
  }

  /**
   * Withdraws what a grant has live — its unspent refresh tokens, its access tokens — before a
   * spent refresh token is honoured again, so that the new pair is the grant's only one. A
   * superseded refresh token is marked spent and expired at the same instant (a token in use is
   * always spent before it expires, so `expires_at <= used_at` marks it without a new column).
   */
  async function supersedeLiveIn(tx: Queryable, grantId: string, now: Date) {
    await tx.update(oauthRefreshTokens).set({ usedAt: now, expiresAt: now }).where(and(eq(oauthRefreshTokens.grantId, grantId), isNull(oauthRefreshTokens.usedAt), gt(oauthRefreshTokens.expiresAt, now)))
    await tx.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.grantId, grantId), isNull(apiKeys.revokedAt)))
  }

  async function revokeGrantIn(tx: Queryable, grantId: string, now: Date) {
    await tx.update(oauthGrants).set({ revokedAt: now }).where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
    await tx.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.grantId, grantId), isNull(apiKeys.revokedAt)))
  }

  return {
    async registerClient(input: { name: string; redirectUris: string[]; authMethod: OAuthClient['authMethod']; now: Date }) {
      const id = newId('cli')
      const secret = input.authMethod === 'none' ? null : generateSecret('gdx_')
      const [row] = await db
        .insert(oauthClients)
        .values({ id, name: input.name, redirectUris: input.redirectUris, authMethod: input.authMethod, secretHash: secret && hashKey(secret), createdAt: input.now })
        .returning()
      return { client: row!, secret }
    },

    /** A Client ID Metadata Document client: its id is the document's URL; name and redirect URIs follow the document. */
    async upsertMetadataClient(input: { id: string; name: string; redirectUris: string[]; now: Date }): Promise<OAuthClient> {
      const [row] = await db
        .insert(oauthClients)
        .values({ id: input.id, name: input.name, redirectUris: input.redirectUris, authMethod: 'none', secretHash: null, createdAt: input.now })
        .onConflictDoUpdate({ target: oauthClients.id, set: { name: input.name, redirectUris: input.redirectUris } })
        .returning()
      return row!
    },

    async client(id: string): Promise<OAuthClient | undefined> {
      // A client_id from a request: one PostgreSQL text cannot hold (a NUL) names no client.
      if (id.includes('\u0000')) return undefined
      const [row] = await db.select().from(oauthClients).where(eq(oauthClients.id, id))
      return row
    },

    /** A consent and its single-use authorization code. */
    async authorize(input: { clientId: string; userId: string; workspaceId: string; resource: string; scope: string; redirectUri: string; codeChallenge: string; now: Date }) {
      return db.transaction(async (tx) => {
        const grantId = newId('grt')
        await tx.insert(oauthGrants).values({ id: grantId, clientId: input.clientId, userId: input.userId, workspaceId: input.workspaceId, resource: input.resource, scope: input.scope, createdAt: input.now })
        const code = generateSecret('gdc_')
        await tx.insert(oauthCodes).values({ hash: hashKey(code), grantId, redirectUri: input.redirectUri, codeChallenge: input.codeChallenge, expiresAt: later(input.now, CODE_TTL_S) })
        return code
      })
    },

    /**
     * Redeems a code once. A second use of the same code revokes its grant (RFC 6749 §4.1.2):
     * someone else has it. `check` validates client, redirect URI and PKCE before tokens exist.
     */
    async redeemCode(code: string, now: Date, check: (c: { clientId: string; redirectUri: string; codeChallenge: string; resource: string }) => string | null) {
      // May revoke a grant's tokens: what is kept is dropped once it is over.
      return cache.changes(db.transaction(async (tx) => {
        const [row] = await tx
          .select({ grantId: oauthCodes.grantId, redirectUri: oauthCodes.redirectUri, codeChallenge: oauthCodes.codeChallenge, expiresAt: oauthCodes.expiresAt, usedAt: oauthCodes.usedAt, clientId: oauthGrants.clientId, userId: oauthGrants.userId, workspaceId: oauthGrants.workspaceId, resource: oauthGrants.resource, scope: oauthGrants.scope, revokedAt: oauthGrants.revokedAt })
          .from(oauthCodes)
          .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
          .where(eq(oauthCodes.hash, hashKey(code)))
          .for('update')
        if (!row) return { error: 'The authorization code is unknown.' } as const
        if (row.usedAt) {
          await revokeGrantIn(tx, row.grantId, now)
          return { error: 'The authorization code was already used; the tokens issued for it are revoked.' } as const
        }
        if (row.expiresAt <= now || row.revokedAt) return { error: 'The authorization code has expired.' } as const
        const problem = check(row)
        if (problem) return { error: problem } as const
        await tx.update(oauthCodes).set({ usedAt: now }).where(eq(oauthCodes.hash, hashKey(code)))
        const tokens = await issueTokens(tx, { id: row.grantId, userId: row.userId, workspaceId: row.workspaceId }, now)
        return { tokens, scope: row.scope } as const
      }))
    },

    /**
     * Rotates a refresh token: the old one is spent. A spent one presented again within the grace
     * window replaces the pair issued before (a grant has one live chain); after it, or a
     * superseded one presented at all, revokes the grant.
     */
    async refresh(token: string, clientId: string, now: Date) {
      return cache.changes(db.transaction(async (tx) => {
        // FOR UPDATE locks the grant's row too: the refreshes of one grant take turns.
        const [row] = await tx
          .select({ grantId: oauthRefreshTokens.grantId, expiresAt: oauthRefreshTokens.expiresAt, usedAt: oauthRefreshTokens.usedAt, clientId: oauthGrants.clientId, userId: oauthGrants.userId, workspaceId: oauthGrants.workspaceId, scope: oauthGrants.scope, revokedAt: oauthGrants.revokedAt })
          .from(oauthRefreshTokens)
          .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
          .where(eq(oauthRefreshTokens.hash, hashKey(token)))
          .for('update')
        if (!row || row.clientId !== clientId) return { error: 'The refresh token is unknown.' } as const
        if (row.revokedAt) return { error: 'The refresh token was revoked.' } as const
        if (row.usedAt && row.expiresAt <= row.usedAt) {
          // Its pair was replaced when the token before it was presented again: two parties hold this chain.
          await revokeGrantIn(tx, row.grantId, now)
          return { error: 'The refresh token was superseded (the token before it was used again); the grant is revoked.' } as const
        }
        if (row.expiresAt <= now) return { error: 'The refresh token has expired.' } as const
        if (row.usedAt) {
          // Within the grace window a lost rotation is retried, not an attack: a fresh pair, which
          // replaces the one issued before (whoever holds that one can use it no longer).
          if (now.getTime() - row.usedAt.getTime() <= REFRESH_REUSE_GRACE_S * 1000) {
            await supersedeLiveIn(tx, row.grantId, now)
            const tokens = await issueTokens(tx, { id: row.grantId, userId: row.userId, workspaceId: row.workspaceId }, now)
            return { tokens, scope: row.scope } as const
          }
          await revokeGrantIn(tx, row.grantId, now)
          return { error: 'The refresh token was already used; the grant is revoked.' } as const
        }
        await tx.update(oauthRefreshTokens).set({ usedAt: now }).where(eq(oauthRefreshTokens.hash, hashKey(token)))
        const tokens = await issueTokens(tx, { id: row.grantId, userId: row.userId, workspaceId: row.workspaceId }, now)
        return { tokens, scope: row.scope } as const
      }))
    },

    /** RFC 7009: an access token is revoked alone; a refresh token revokes its whole grant. */
    async revokeToken(token: string, clientId: string | null, now: Date): Promise<void> {
      const hash = hashKey(token)
      await cache.changes(db.transaction(async (tx) => {
        const [refresh] = await tx
          .select({ grantId: oauthRefreshTokens.grantId, clientId: oauthGrants.clientId })
          .from(oauthRefreshTokens)
          .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
          .where(eq(oauthRefreshTokens.hash, hash))
        if (refresh && (!clientId || refresh.clientId === clientId)) return revokeGrantIn(tx, refresh.grantId, now)
        // An access token is revoked only by the client it was issued to (RFC 7009 §2.1).
        const ofClient = clientId
          ? sql`${apiKeys.grantId} in (select ${oauthGrants.id} from ${oauthGrants} where ${oauthGrants.clientId} = ${clientId})`
          : sql`true`
        await tx.update(apiKeys).set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now.toISOString()}::timestamptz)` }).where(and(eq(apiKeys.hash, hash), eq(apiKeys.kind, 'oauth'), ofClient))
      }))
    },

    /** The user's connected clients (grants not revoked), for the console. */
    async connections(userId: string) {
      return db
        .select({ id: oauthGrants.id, clientName: oauthClients.name, clientId: oauthClients.id, createdAt: oauthGrants.createdAt, scope: oauthGrants.scope })
        .from(oauthGrants)
        .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
        .where(and(eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
        .orderBy(desc(oauthGrants.createdAt))
    },

    /** Disconnects a client: the grant and every token issued under it. */
    async revokeGrant(grantId: string, userId: string, now: Date): Promise<boolean> {
      return cache.changes(db.transaction(async (tx) => {
        const [grant] = await tx.select({ id: oauthGrants.id }).from(oauthGrants).where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.userId, userId)))
        if (!grant) return false
        await revokeGrantIn(tx, grantId, now)
        return true
      }))
    },
  }
}
