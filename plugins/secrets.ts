// The server key that seals the secrets the database keeps (db/secret-box.ts), and what a start
// does with it before anything reads a secret: seal what is still plaintext (rows from before
// migration 0013 — a SQL migration cannot, it never sees the key), refuse to start when the
// database holds values sealed under a key this instance lacks (a wrong or lost SECRETS_KEY, a
// second instance with a key file of its own), and validate migration 0013's constraints.
//
// Where the key comes from: SECRETS_KEY; else the key file DATA_DIR/secrets.key, made (mode
// 0600) at the first start, on the embedded database and on PostgreSQL alike; else (memory://,
// tests) a key for this process only. Never from the database, never into a log line.
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { SecretsConfig } from '../config.ts'
import { decodeSecretsKey, KEY_BYTES, SecretBox, SecretsKeyError } from '../db/secret-box.ts'
import { createSealedSecretsRepository, unknownKeysError, type ForgetReport, type ResealReport } from '../db/repositories/sealed-secrets.ts'
import { newSigningKeyPair, newWebhookSecret } from '../core/webhooks.ts'

declare module 'fastify' {
  interface FastifyInstance {
    secrets: {
      box: SecretBox
      /** Where the current key came from, for messages (never the key). */
      source: string
      /** growthdesk admin rotate-secrets-key: every value sealed again under the current key. */
      reseal(): Promise<ResealReport>
      /** What a start with `forgetUnreadable` gave up; null otherwise. */
      forgotten: ForgetReport | null
    }
  }
}

export interface SecretsPluginOptions {
  secrets?: SecretsConfig | undefined
  /** For a lost key (growthdesk admin rotate-secrets-key --forget-unreadable): see ForgetReport. */
  forgetUnreadable?: boolean
}

interface ServerKeys {
  current: Buffer
  previous: Buffer[]
  source: string
  /** A key file was made by this start. */
  created?: string
}

/** Reads the key file; null when there is none. */
function readKeyFile(file: string): Buffer | null {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new SecretsKeyError(`The secrets key file ${file} cannot be read: ${(err as Error).message}`)
  }
  const key = decodeSecretsKey(text)
  if (!key) throw new SecretsKeyError(`The secrets key file ${file} does not hold a ${KEY_BYTES}-byte key in base64 or hex.`)
  return key
}

/** The key file's key, made first if there is none (two processes at once: one writes, both read it). */
function keyFromFile(file: string): { key: Buffer; created: boolean } {
  const found = readKeyFile(file)
  if (found) return { key: found, created: false }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    fs.writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new SecretsKeyError(`The secrets key file ${file} cannot be made: ${(err as Error).message}`)
    return { key: readKeyFile(file)!, created: false }
  }
  return { key: readKeyFile(file)!, created: true }
}

export function serverKeys(config: SecretsConfig | undefined): ServerKeys {
  const previous = config?.previous ?? []
  if (config?.key) {
    // A key file left from before SECRETS_KEY was set still opens what it sealed.
    const fileKey = config.keyFile ? readKeyFile(config.keyFile) : null
    return { current: config.key, previous: fileKey ? [...previous, fileKey] : previous, source: 'SECRETS_KEY' }
  }
  if (config?.keyFile) {
    const { key, created } = keyFromFile(config.keyFile)
    return { current: key, previous, source: `the key file ${config.keyFile}`, ...(created ? { created: config.keyFile } : {}) }
  }
  return { current: randomBytes(KEY_BYTES), previous, source: 'a key made for this process only' }
}

async function secretsPlugin(app: FastifyInstance, options: SecretsPluginOptions) {
  const keys = serverKeys(options.secrets)
  const box = new SecretBox(keys.current, keys.previous)
  const others = box.keyIds.slice(1)
  const describe = `key id ${box.keyId} (${keys.source})${others.length ? ` and, to open only, key id ${others.join(', ')}` : ''}`
  if (keys.created) {
    app.log.warn({ keyFile: keys.created, keyId: box.keyId }, 'made a secrets key file: back it up apart from the database, which is useless to restore without it (docs/deploy.md)')
  }
  if (app.database.kind === 'postgres' && !options.secrets?.key && options.secrets?.keyFile) {
    app.log.warn({ keyFile: options.secrets.keyFile, keyId: box.keyId }, 'SECRETS_KEY is not set: secrets are sealed with the key file; several instances on one database need SECRETS_KEY, the same on each (docs/deploy.md)')
  }
  const atRest = createSealedSecretsRepository(app.db, box)
  const forgotten = options.forgetUnreadable ? await atRest.forgetUnreadable(newWebhookSecret, newSigningKeyPair) : null
  const sealed = await atRest.sealPlaintext()
  if (sealed > 0) app.log.info({ sealed, keyId: box.keyId }, 'sealed secrets kept in plaintext by an earlier version')
  const unknown = await atRest.unknownKeyIds()
  if (unknown.size > 0) throw unknownKeysError(unknown, describe)
  await atRest.validateConstraints()
  app.decorate('secrets', { box, source: keys.source, reseal: () => atRest.reseal(), forgotten })
}

export default fp(secretsPlugin, { name: 'secrets', dependencies: ['database'] })
