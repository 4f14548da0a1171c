import t from 'tap'
import { createHash } from 'node:crypto'
import { crc32, displayKey, generateKey, hashKey, keyKinds, keyPrefixes, parseKey, type KeyKind } from '../db/keys.ts'

const FORMAT = /^gd[msio]_[0-9A-Za-z]{38}$/
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The same key with the character at `index` replaced by another base62 character. */
function changeAt(key: string, index: number, step = 1): string {
  const next = BASE62[(BASE62.indexOf(key[index]!) + step) % 62]!
  return key.slice(0, index) + next + key.slice(index + 1)
}

t.test('each kind has its prefix and the documented format', async (t) => {
  t.same(keyPrefixes, { mcp: 'gdm_', service: 'gds_', ingest: 'gdi_', oauth: 'gdo_' })
  for (const kind of keyKinds) {
    const seen = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const key = generateKey(kind)
      if (!FORMAT.test(key) || !key.startsWith(keyPrefixes[kind])) {
        t.fail(`${kind}: ${key} does not match the format`)
        return
      }
      if (parseKey(key) !== kind) {
        t.fail(`${kind}: ${key} does not parse back to its kind`)
        return
      }
      seen.add(key)
    }
    t.equal(seen.size, 200, `${kind}: 200 distinct keys`)
    t.equal(generateKey(kind).length, 42)
  }
})

t.test('the random part uses the whole base62 alphabet', async (t) => {
  const used = new Set<string>()
  for (let i = 0; i < 100; i++) for (const c of generateKey('service').slice(4, 36)) used.add(c)
  t.equal(used.size, 62)
})

t.test('the checksum is CRC32 of prefix + random part in 6 base62 characters', async (t) => {
  t.equal(crc32('123456789'), 0xcbf43926, 'the standard CRC-32 check value')
  t.equal(crc32(''), 0)
  // Of the UTF-8 bytes, also past ASCII.
  for (const [text, crc] of [['héllo', 2654700086], ['gds_€', 297235574], ['日本語のキー', 1618436673], ['a\u{1F600}b', 3024268676]] as const) t.equal(crc32(text), crc, `crc32(${JSON.stringify(text)})`)
  const key = generateKey('mcp')
  let n = crc32(key.slice(0, 36))
  let expected = ''
  for (let i = 0; i < 6; i++) {
    expected = BASE62[n % 62] + expected
    n = Math.floor(n / 62)
  }
  t.equal(key.slice(36), expected)
})

t.test('parseKey refuses any single changed character', async (t) => {
  for (const kind of keyKinds) {
    const key = generateKey(kind)
    for (let i = 4; i < key.length; i++) {
      for (const step of [1, 31, 61]) {
        const changed = changeAt(key, i, step)
        if (parseKey(changed) !== null) {
          t.fail(`${kind}: ${changed} (position ${i} changed) was accepted`)
          return
        }
      }
    }
    t.pass(`${kind}: every change in the random and checksum parts is refused`)
  }
  const key = generateKey('service')
  t.equal(parseKey(changeAt(key, 10)), null, 'a change in the random part')
  t.equal(parseKey(changeAt(key, 39)), null, 'a change in the checksum part')
  const letter = [...key.slice(4)].findIndex((c) => /[a-zA-Z]/.test(c)) + 4
  const flipped = key[letter] === key[letter]!.toUpperCase() ? key[letter]!.toLowerCase() : key[letter]!.toUpperCase()
  t.equal(parseKey(key.slice(0, letter) + flipped + key.slice(letter + 1)), null, 'keys are case-sensitive')
})

t.test('parseKey refuses a wrong prefix', async (t) => {
  const key = generateKey('mcp')
  const body = key.slice(4)
  t.equal(parseKey(`gdx_${body}`), null, 'an unknown prefix')
  t.equal(parseKey(`GDM_${body}`), null, 'prefixes are lower case')
  t.equal(parseKey(`gdm-${body}`), null)
  t.equal(parseKey(body), null, 'no prefix')
  // The checksum covers the prefix, so a key cannot be relabelled as another kind.
  for (const kind of ['service', 'ingest', 'oauth'] as KeyKind[]) {
    t.equal(parseKey(keyPrefixes[kind] + body), null, `relabelled as ${kind}`)
  }
})

t.test('parseKey refuses a wrong length or stray characters', async (t) => {
  const key = generateKey('ingest')
  t.equal(parseKey(key.slice(0, -1)), null, 'one character short')
  t.equal(parseKey(`${key}0`), null, 'one character long')
  t.equal(parseKey(`${key.slice(0, 36)}0${key.slice(36)}`), null, 'an extra character before the checksum')
  t.equal(parseKey(` ${key}`), null, 'leading space')
  t.equal(parseKey(`${key}\n`), null, 'trailing newline')
  t.equal(parseKey(`${key.slice(0, 20)}-${key.slice(21)}`), null, 'a character outside base62')
  t.equal(parseKey(''), null)
  t.equal(parseKey('gdi_'), null)
})

t.test('hashKey is the hex SHA-256 of the whole key', async (t) => {
  t.equal(hashKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  const key = generateKey('service')
  t.equal(hashKey(key), createHash('sha256').update(key, 'utf8').digest('hex'))
  t.match(hashKey(key), /^[0-9a-f]{64}$/)
  t.not(hashKey(key), hashKey(changeAt(key, 5)))
})

t.test('displayKey shows the prefix and the last four characters only', async (t) => {
  t.equal(displayKey('gdm_0123456789abcdefghijklmnopqrstuvABCDEF'), 'gdm_…CDEF')
  for (const kind of keyKinds) {
    const key = generateKey(kind)
    const shown = displayKey(key)
    t.equal(shown, `${keyPrefixes[kind]}…${key.slice(-4)}`)
    t.equal(shown.length, 9)
  }
})
