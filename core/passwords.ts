// Password hashing with scrypt (memory-hard, in node:crypto, no native add-on).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { randomBase62 } from '../db/ids.ts'

// scrypt's cost: N = 2^15 with r = 8 (OWASP's recommendation; ~100 ms and 32 MB a hash). A hash
// carries its parameters, so a stored hash is verified with the cost it was made with.
/** The cost (scrypt's N) of new hashes, unless the app is built with another (BuildOptions.passwordHashCost). */
export const PASSWORD_HASH_COST = 2 ** 15
const BLOCK_SIZE = 8
const PARALLELISM = 1
const KEY_LENGTH = 32

/** A cost scrypt takes: a power of two above 1. */
export function isPasswordHashCost(n: number): boolean {
  return Number.isSafeInteger(n) && n > 1 && (n & (n - 1)) === 0
}

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: 256 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key)
    )
  )
}

/** A new hash of `password` at scrypt cost `cost` (the app's `passwordHashCost`). */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, { N: cost, r: BLOCK_SIZE, p: PARALLELISM })
  return `scrypt$${cost}$${BLOCK_SIZE}$${PARALLELISM}$${salt.toString('base64')}$${key.toString('base64')}`
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** A password for a user the CLI creates: 24 base62 characters (~143 bits). */
export function generatePassword(): string {
  return randomBase62(24)
}

/** The shortest and longest password a person may choose (NIST SP 800-63B: length, no composition rules). */
export const PASSWORD_MIN_LENGTH = 12
export const PASSWORD_MAX_LENGTH = 200

/** Why a password a person chose cannot be used, in a sentence; undefined when it can. */
export function passwordProblem(password: string, email: string): string | undefined {
  const length = [...password.normalize('NFC')].length
  if (length < PASSWORD_MIN_LENGTH) return `The password is too short: use at least ${PASSWORD_MIN_LENGTH} characters (a few words make a good one).`
  if (length > PASSWORD_MAX_LENGTH) return `The password is too long: use at most ${PASSWORD_MAX_LENGTH} characters.`
  if (password.includes('\u0000')) return 'The password cannot contain a NUL character.'
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) return 'The password cannot be your email address.'
  return undefined
}
