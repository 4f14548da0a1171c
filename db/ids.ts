// Opaque public ids and random secrets in base62.
import { randomBytes } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Uniform base62 characters from a CSPRNG (bytes ≥ 248 are rejected to avoid modulo bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

export function toBase62(value: number, width: number): string {
  let out = ''
  let n = value
  do {
    out = ALPHABET[n % 62] + out
    n = Math.floor(n / 62)
  } while (n > 0)
  return out.padStart(width, '0')
}

export type IdPrefix = 'wsp' | 'usr' | 'prj' | 'opp' | 'mem' | 'key' | 'cli' | 'grt' | 'whk' | 'msg' | 'inv' | 'cmt' | 'tag' | 'view' | 'alr' | 'ale'

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`
}
