// The secrets the database keeps sealed (db/secret-box.ts), as a whole: sealing what is still
// plaintext (and dropping the plaintext show-once slots of console sessions of older versions), finding values no key of this instance opens, re-sealing under the current key
// after a rotation, and giving up values whose key is lost. The columns: webhooks.secret and
// webhooks.previous_secret (context `webhook:<id>`), webhooks.signing_key (the ed25519 key of v1a,
// `webhook_signing_key:<id>`; never plaintext: it was sealed from the start), app_secrets.value (`app_secret:<name>`).
//
// Every write is a compare-and-set on the value read (`where … = <what was read>`): instances
// starting at once never overwrite each other's work, and a value changed meanwhile (a
// rotation) is left to its writer.
import { sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import { isSealed, sealContexts, SecretsKeyError, type SecretBox } from '../secret-box.ts'

/** Migration 0013's CHECK constraints, added NOT VALID (rows from before were still plaintext). */
const SEALED_CHECKS = [
  { table: 'webhooks', name: 'webhooks_secret_sealed_check' },
  { table: 'app_secrets', name: 'app_secrets_value_sealed_check' },
] as const

interface WebhookSecrets {
  id: string
  secret: string
  previous_secret: string | null
  /** previous_secret still signs (previous_secret_until is ahead). */
  previous_live: boolean
}

export interface ResealReport {
  /** Values sealed again under the current key (they were sealed under another, or plaintext). */
  resealed: number
  /** Previous webhook secrets past their overlap, dropped rather than sealed again. */
  expiredCleared: number
}

export interface ForgetReport {
  /** Webhooks whose signing secret could not be opened: each has a new one nobody knows yet (rotate it). */
  webhooks: string[]
  /** Webhooks whose previous secret could not be opened: dropped (it signs no more). */
  previousSecrets: string[]
  /** app_secrets rows dropped; each is made again (cookie_secret: everyone signs in again). */
  appSecrets: string[]
  /** Webhooks whose ed25519 signing key could not be opened: each has a new key pair (its receivers need the new public key). */
  signingKeys: string[]
}

export function createSealedSecretsRepository(db: Queryable, box: SecretBox) {
  const webhookRows = async (where: ReturnType<typeof sql>) =>
    rowsOf<WebhookSecrets>(await db.execute(sql`
      select id, secret, previous_secret, coalesce(previous_secret_until > now(), false) as previous_live
      from webhooks where ${where} order by id`))
  const appSecretRows = async (where: ReturnType<typeof sql>) =>
    rowsOf<{ name: string; value: string }>(await db.execute(sql`select name, value from app_secrets where ${where} order by name`))

  /** Writes a webhook's secrets if they are still what was read; resolves to whether it did. */
  async function setWebhook(row: WebhookSecrets, secret: string, previous: string | null): Promise<boolean> {
    const result = await db.execute(sql`
      update webhooks set secret = ${secret}, previous_secret = ${previous}, previous_secret_until = case when ${previous}::text is null then null else previous_secret_until end
      where id = ${row.id} and secret = ${row.secret} and previous_secret is not distinct from ${row.previous_secret}
      returning 1`)
    return rowsOf(result).length > 0
  }

  /** Writes a webhook's signing key (and public key) if it is still what was read. */
  async function setSigningKey(id: string, was: string, value: string, publicKey?: string): Promise<boolean> {
    const result = await db.execute(sql`
      update webhooks set signing_key = ${value}, public_key = coalesce(${publicKey ?? null}::text, public_key)
      where id = ${id} and signing_key = ${was}
      returning 1`)
    return rowsOf(result).length > 0
  }
  const signingKeyRows = async (where: ReturnType<typeof sql>) =>
    rowsOf<{ id: string; signing_key: string }>(await db.execute(sql`select id, signing_key from webhooks where signing_key is not null and ${where} order by id`))

  async function setAppSecret(name: string, was: string, value: string): Promise<boolean> {
    return rowsOf(await db.execute(sql`update app_secrets set value = ${value} where name = ${name} and value = ${was} returning 1`)).length > 0
  }

  /** The value sealed under the current key: plaintext sealed, another key's value opened and sealed again. */
  const resealed = (value: string, context: string) => box.seal(isSealed(value) ? box.open(value, context) : value, context)

  return {
    /**
     * Seals every value still in plaintext — written before migration 0013, or by an older
     * instance during an upgrade. Idempotent (a sealed value starts `enc:`); resolves to how many.
     */
    async sealPlaintext(): Promise<number> {
      let n = 0
      for (const row of await webhookRows(sql`secret not like 'enc:%' or previous_secret not like 'enc:%'`)) {
        const context = sealContexts.webhook(row.id)
        const seal = (v: string | null) => (v === null || isSealed(v) ? v : box.seal(v, context))
        if (await setWebhook(row, seal(row.secret)!, seal(row.previous_secret))) n++
      }
      for (const row of await appSecretRows(sql`value not like 'enc:%'`)) {
        if (await setAppSecret(row.name, row.value, box.seal(row.value, sealContexts.appSecret(row.name)))) n++
      }
      // Console sessions that kept a new key or webhook secret in plaintext for its show-once
      // page (newKey.key, newWebhookSecret.secret, before this version): the slot is dropped (the
      // page says "already shown"). Slots written since are sealed and named otherwise.
      const slots = await db.execute(sql`
        update sessions set data = data - 'newKey' - 'newWebhookSecret'
        where data #> '{newKey,key}' is not null or data #> '{newWebhookSecret,secret}' is not null
        returning 1`)
      return n + rowsOf(slots).length
    },

    /**
     * The key ids of sealed values that no key of this box opens (a previous webhook secret past
     * its overlap aside: it signs no more), each with what it seals.
     */
    async unknownKeyIds(): Promise<Map<string, string[]>> {
      const result = await db.execute(sql`
        select split_part(secret, ':', 3) as id, 'webhook signing secrets' as what from webhooks where secret like 'enc:%'
        union select split_part(previous_secret, ':', 3), 'previous webhook signing secrets' from webhooks
          where previous_secret like 'enc:%' and previous_secret_until > now()
        union select split_part(signing_key, ':', 3), 'webhook ed25519 signing keys' from webhooks where signing_key like 'enc:%'
        union select split_part(value, ':', 3), 'the console''s ' || replace(name, '_', ' ') from app_secrets where value like 'enc:%'
        order by 1, 2`)
      const known = new Set(box.keyIds)
      const unknown = new Map<string, string[]>()
      for (const { id, what } of rowsOf<{ id: string; what: string }>(result)) {
        if (!known.has(id)) unknown.set(id, [...(unknown.get(id) ?? []), what])
      }
      return unknown
    },

    /**
     * After a change of SECRETS_KEY (the old key in SECRETS_KEY_PREVIOUS): every value sealed
     * under another key is sealed again under the current one, and previous webhook secrets past
     * their overlap are dropped. Throws SecretsKeyError, changing nothing more, at a value no
     * key of the box opens. Afterwards the old key opens nothing the database holds.
     */
    async reseal(): Promise<ResealReport> {
      const expired = rowsOf(await db.execute(sql`
        update webhooks set previous_secret = null, previous_secret_until = null
        where previous_secret is not null and (previous_secret_until is null or previous_secret_until <= now())
        returning 1`)).length
      let n = 0
      const current = `enc:v1:${box.keyId}:%`
      for (const row of await webhookRows(sql`secret not like ${current} or previous_secret not like ${current}`)) {
        const context = sealContexts.webhook(row.id)
        if (await setWebhook(row, resealed(row.secret, context), row.previous_secret === null ? null : resealed(row.previous_secret, context))) n++
      }
      for (const row of await signingKeyRows(sql`signing_key not like ${current}`)) {
        if (await setSigningKey(row.id, row.signing_key, resealed(row.signing_key, sealContexts.webhookSigningKey(row.id)))) n++
      }
      for (const row of await appSecretRows(sql`value not like ${current}`)) {
        if (await setAppSecret(row.name, row.value, resealed(row.value, sealContexts.appSecret(row.name)))) n++
      }
      return { resealed: n, expiredCleared: expired }
    },

    /**
     * For a lost key: every value no key of this box opens is replaced or dropped. A webhook's
     * signing secret becomes `newSecret()` (sealed; nobody knows it: its owner rotates it and
     * gives the receiver the new one; its messages wait and are retried meanwhile); a previous
     * secret is dropped; an app secret is deleted (made again at start).
     */
    async forgetUnreadable(newSecret: () => string, newKeyPair?: () => { signingKey: string; publicKey: string }): Promise<ForgetReport> {
      const report: ForgetReport = { webhooks: [], previousSecrets: [], appSecrets: [], signingKeys: [] }
      const lost = (v: string | null) => v !== null && isSealed(v) && !box.canOpen(v)
      for (const row of await webhookRows(sql`secret like 'enc:%' or previous_secret like 'enc:%'`)) {
        if (!lost(row.secret) && !lost(row.previous_secret)) continue
        const secret = lost(row.secret) ? box.seal(newSecret(), sealContexts.webhook(row.id)) : row.secret
        const previous = lost(row.previous_secret) ? null : row.previous_secret
        if (await setWebhook(row, secret, previous)) {
          if (lost(row.secret)) report.webhooks.push(row.id)
          if (lost(row.previous_secret)) report.previousSecrets.push(row.id)
        }
      }
      // A lost ed25519 key: a new pair (its public key is readable in the webhook; receivers trust it anew).
      for (const row of newKeyPair ? await signingKeyRows(sql`true`) : []) {
        if (!lost(row.signing_key)) continue
        const pair = newKeyPair!()
        if (await setSigningKey(row.id, row.signing_key, box.seal(pair.signingKey, sealContexts.webhookSigningKey(row.id)), pair.publicKey)) report.signingKeys.push(row.id)
      }
      for (const row of await appSecretRows(sql`value like 'enc:%'`)) {
        if (!lost(row.value)) continue
        const deleted = await db.execute(sql`delete from app_secrets where name = ${row.name} and value = ${row.value} returning 1`)
        if (rowsOf(deleted).length > 0) report.appSecrets.push(row.name)
      }
      return report
    },

    /**
     * Once nothing is plaintext, migration 0013's NOT VALID constraints are validated: from then
     * on PostgreSQL itself vouches that every row is sealed. Once per database (a validated
     * constraint is skipped); a plaintext row written meanwhile keeps it for the next start.
     */
    async validateConstraints(): Promise<void> {
      const result = await db.execute(sql`select conname from pg_constraint where connamespace = 'public'::regnamespace and not convalidated and conname in (${sql.join(SEALED_CHECKS.map((c) => sql`${c.name}`), sql`, `)})`)
      const pending = new Set(rowsOf<{ conname: string }>(result).map((r) => r.conname))
      for (const c of SEALED_CHECKS) {
        if (!pending.has(c.name)) continue
        await db.execute(sql.raw(`alter table "${c.table}" validate constraint "${c.name}"`)).catch((err: unknown) => {
          // 23514: a row written in plaintext since the sealing (an older instance still running).
          if ((err as { code?: string }).code !== '23514' && (err as { cause?: { code?: string } }).cause?.code !== '23514') throw err
        })
      }
    },
  }
}

export type SealedSecretsRepository = ReturnType<typeof createSealedSecretsRepository>

/** The operator's sentence for values sealed under keys this instance lacks (`describeKeys`: its own). */
export function unknownKeysError(unknown: Map<string, string[]>, describeKeys: string): SecretsKeyError {
  const list = [...unknown].map(([id, what]) => `${id} (${what.join(', ')})`).join('; ')
  return new SecretsKeyError(
    `The database holds secrets sealed with key id ${list}, which this instance cannot open: it has ${describeKeys}. ` +
      'Start it with the key the database was first started with — SECRETS_KEY, or the key file DATA_DIR/secrets.key of the ' +
      'first start — and, after changing SECRETS_KEY, the old key in SECRETS_KEY_PREVIOUS; every instance on one database needs ' +
      'the same key. If that key is lost: growthdesk admin rotate-secrets-key --forget-unreadable (webhooks get new signing ' +
      'secrets that their owners must rotate; everyone signs in to the console again).'
  )
}
