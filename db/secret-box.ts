// Secrets the service must be able to read back (webhook signing secrets, the console's cookie
// secret, a new key waiting for the page that shows it once) are kept sealed: AES-256-GCM under
// a server key that is never in the database (SECRETS_KEY, or a key file in DATA_DIR). A dump
// or a backup of the database alone holds nothing that signs or authenticates.
//
// A sealed value is `enc:v1:<key id>:<base64 of iv, ciphertext, tag>`: self-describing, so that
// sealing what is still plaintext is idempotent (the prefix is the marker), and the key id says
// which key opens it (rotation: SECRETS_KEY_PREVIOUS keys still open what they sealed). The key
// id is derived from the key by HKDF and reveals nothing of it. Each value is bound to where it
// belongs (the additional authenticated data, e.g. `webhook:whk_…`): a sealed secret copied to
// another row does not open there.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

export const SEALED_PREFIX = 'enc:v1:'
/** The key file's name in DATA_DIR, when SECRETS_KEY is not set. */
export const SECRETS_KEY_FILE = 'secrets.key'
const IV_BYTES = 12
const TAG_BYTES = 16
export const KEY_BYTES = 32

/** A server key that cannot open a value, or that is missing: for the operator, not a bug. */
export class SecretsKeyError extends Error {
  override name = 'SecretsKeyError'
}

/**
 * A 32-byte key written as 64 hex digits or as base64 (44 characters with its `=`, 43 without;
 * the URL-safe alphabet too), or null when the text is neither.
 */
export function decodeSecretsKey(text: string): Buffer | null {
  const s = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, 'hex')
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) return null
  const key = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  return key.length === KEY_BYTES ? key : null
}

interface Key {
  id: string
  aes: Buffer
}

function derive(master: Buffer): Key {
  if (master.length !== KEY_BYTES) throw new SecretsKeyError(`A secrets key must be ${KEY_BYTES} bytes, not ${master.length}.`)
  const info = (what: string) => `growthdesk secrets at rest v1: ${what}`
  return {
    id: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info('key id'), 6)).toString('hex'),
    aes: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info('aes-256-gcm'), KEY_BYTES)),
  }
}

/** What seals and opens: the app's SecretBox, or one that refuses (code with no server key). */
export interface Sealer {
  seal(plaintext: string, context: string): string
  open(sealed: string, context: string): string
}

export const isSealed = (value: string): boolean => value.startsWith(SEALED_PREFIX)

/** The key id of a sealed value, or null for anything else. */
export function keyIdOf(value: string): string | null {
  if (!isSealed(value)) return null
  const end = value.indexOf(':', SEALED_PREFIX.length)
  return end === -1 ? null : value.slice(SEALED_PREFIX.length, end)
}

export class SecretBox implements Sealer {
  readonly #current: Key
  readonly #keys: Map<string, Key>

  /** `current` seals (and opens); each of `previous` only opens what it sealed. */
  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    this.#current = derive(current)
    this.#keys = new Map([this.#current, ...previous.map(derive)].map((k) => [k.id, k]))
  }

  /** The id of the key that seals. */
  get keyId(): string {
    return this.#current.id
  }

  /** Every key id this box opens, the current one first. */
  get keyIds(): string[] {
    return [...this.#keys.keys()]
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#current.aes, iv)
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return `${SEALED_PREFIX}${this.#current.id}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64')}`
  }

  /** Whether a key of this box opens the value (by its key id; a tampered value still fails to open). */
  canOpen(value: string): boolean {
    const id = keyIdOf(value)
    return id !== null && this.#keys.has(id)
  }

  /**
   * The plaintext of a value this box sealed for `context`. Throws SecretsKeyError when no key of
   * the box has its key id, and an Error when it is not a sealed value, was altered, or belongs
   * elsewhere (another context).
   */
  open(sealed: string, context: string): string {
    const id = keyIdOf(sealed)
    if (id === null) throw new Error('Not a sealed value.')
    const key = this.#keys.get(id)
    if (!key) {
      throw new SecretsKeyError(
        `A secret in the database is sealed with key id ${id}, which is not a key of this instance (${this.keyIds.join(', ')}): ` +
          'SECRETS_KEY (or SECRETS_KEY_PREVIOUS) must hold the key it was sealed with.'
      )
    }
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length + id.length + 1), 'base64')
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('A sealed value is truncated.')
    const decipher = createDecipheriv('aes-256-gcm', key.aes, raw.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES))
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8')
    } catch {
      throw new Error(`A sealed value (key id ${id}) does not open: it was altered or belongs to another record.`)
    }
  }
}

/** For code given no server key (the CLI's transactions): any use is a bug, said plainly. */
export const noSealer: Sealer = {
  seal() {
    throw new Error('No secrets key here: this repository cannot seal a secret.')
  },
  open() {
    throw new Error('No secrets key here: this repository cannot open a secret.')
  },
}

/** Where each sealed secret belongs (its additional authenticated data). */
export const sealContexts = {
  /** A webhook's current and previous signing secret (a rotation moves one to the other in SQL). */
  webhook: (id: string) => `webhook:${id}`,
  /** A webhook's ed25519 signing key (whsk_…, v1a): a context of its own, so it cannot pass for the HMAC secret. */
  webhookSigningKey: (id: string) => `webhook_signing_key:${id}`,
  appSecret: (name: string) => `app_secret:${name}`,
  /** A console session's show-once slot (newKey, newWebhookSecret), bound to the session's id. */
  session: (sessionId: string, slot: string) => `session:${slot}:${sessionId}`,
}
