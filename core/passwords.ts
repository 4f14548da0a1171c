// Password hashing with scrypt (memory-hard, in node:crypto, no native add-on).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { randomBase62 } from '../db/ids.ts'

// scrypt's cost: N = 2^15 with r = 8 (OWASP's recommendation; ~100 ms and 32 MB a hash). A hash
// carries its parameters, so a stored hash is verified with the cost it was made with.
const PARAMS = { N: 2 ** 15, r: 8, p: 1 }
const KEY_LENGTH = 32

/**
 * For the test suite only: hashes made from now on in this process use this N. Its thousands of
 * users would otherwise spend minutes of CPU in scrypt; nothing a test checks depends on the cost.
 */
export function useCheapPasswordHashesForTests(n = 2 ** 10) {
  PARAMS.N = n
}

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: 256 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key)
    )
  )
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, PARAMS)
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`
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
