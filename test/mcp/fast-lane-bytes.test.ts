// The fast lane's answer written as bytes (routes/mcp-fast.ts, okAnswerBytes): wherever it
// answers, its bytes are those of the answer as text — the text block JSON.stringify's escape of
// the tool's text, the structured content the text itself — and it answers every text that has
// no control character, no lone surrogate and nothing from U+F000 to U+FFFF (those take the text
// path). Random texts over every kind of character JSON treats differently; the corpus of
// test/mcp/fast-lane.test.ts then holds whole answers to the SDK's bytes.
import t from 'tap'
import { okAnswerBytes } from '../../routes/mcp-fast.ts'

const HEAD = '{"result":{"content":[{"type":"text","text":'
const asText = (text: string, tail: string) => `${HEAD}${JSON.stringify(text)}}],"structuredContent":${text}${tail}`
// Plain ASCII; what JSON escapes with a backslash, DEL, Latin-1, the line separators, BMP
// characters up to U+EFFF, a surrogate pair; and what takes the text path: controls, U+F000–U+FFFF
// (U+FFFD, the BOM), lone surrogates of both halves.
const plain = ['a', 'Z', '0', ' ', '{', '}', ':', ',', '/']
const special = ['"', '\\', '\u007f', 'é', 'ÿ', '\u2028', '\u2029', '✓', '中', '\uefff', '😀']
const textPath = ['\n', '\t', '\u0000', '\u001f', '\uf000', '\ufffd', '\ufeff', '\ud800', '\udfff']
const takesBytes = (text: string) => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 || c >= 0xf000) return false
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (c >= 0xdc00 && c <= 0xdfff) return false
  }
  return true
}

let seed = 31
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const tails = [',"jsonrpc":"2.0","id":1}', '},"jsonrpc":"2.0","id":"é-😀"}', ',"resultType":"complete","_meta":{"a":{"name":"growthdesk","version":"1"}}},"jsonrpc":"2.0","id":-5}']
let asBytes = 0
let mismatches = 0
let wrongPath = 0
for (let i = 0; i < 20_000; i++) {
  const length = Math.floor(random() ** 2 * 200)
  let text = ''
  for (let j = 0; j < length; j++) {
    const r = random()
    const from = r < 0.8 ? plain : r < 0.997 ? special : textPath
    text += from[Math.floor(random() * from.length)]
  }
  const tail = tails[i % tails.length]!
  const bytes = okAnswerBytes(text, tail)
  if ((bytes !== undefined) !== takesBytes(text)) wrongPath++
  if (bytes === undefined) continue
  asBytes++
  if (!bytes.equals(Buffer.from(asText(text, tail)))) mismatches++
}
t.equal(mismatches, 0, 'every answer written as bytes is the text answer\'s bytes')
t.equal(wrongPath, 0, 'bytes exactly for the texts without controls, lone surrogates or U+F000–U+FFFF')
t.ok(asBytes > 5_000, `many texts answered as bytes (${asBytes})`)

// Texts that make core/json-escape.ts's WebAssembly memory grow, and a typical page.
for (const text of ['"x\\y"'.repeat(10_000), JSON.stringify({ items: Array.from({ length: 300 }, (_, i) => ({ id: `opp_${i}`, text: `say "hi" \\ é ✓ ${i}` })) })]) {
  t.same(okAnswerBytes(text, '}')?.toString(), asText(text, '}'), `${text.length} characters`)
}
