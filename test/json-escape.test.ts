// core/json-escape.ts: a JSON text escaped as a JSON string's body, by WebAssembly SIMD
// (core/json-escape.wat) and by the byte loop that stands in where V8 cannot run it. Both
// are held to JSON.stringify over random texts of every length around the eight-byte steps, and
// the committed module to what its .wat compiles to.
import fs from 'node:fs'
import t from 'tap'
import { escapeImplementation, escapeText, escapeTextByLoop, MAX_WASM_TEXT } from '../core/json-escape.ts'
import { JSON_ESCAPE_WASM } from '../core/json-escape-wasm.ts'
import { compileWat, GENERATED, generatedSource } from '../bin/build-wasm.ts'

t.test('the committed module is what core/json-escape.wat compiles to (npm run build:wasm)', async (t) => {
  const bytes = await compileWat()
  t.equal(Buffer.from(JSON_ESCAPE_WASM, 'base64').toString('hex'), Buffer.from(bytes).toString('hex'))
  t.equal(fs.readFileSync(GENERATED, 'utf8'), generatedSource(bytes))
})

t.test('this Node runs the WebAssembly version', async (t) => {
  t.equal(escapeImplementation(), 'wasm')
})

const expected = (text: string) => JSON.stringify(text).slice(1, -1)
/** What escapeText should answer: undefined for a control character, a lone surrogate or anything
 * from U+F000 to U+FFFF (JSON.stringify writes those as \uXXXX, or the 0xEF lead byte says it may). */
const escapable = (text: string) =>
  // eslint-disable-next-line no-control-regex -- the control characters are what is looked for
  !/[\u0000-\u001f\uf000-\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

const pieces = ['a', 'z', ' ', '{', ':', '"', '\\', '\u007f', 'é', '\u2028', '✓', '中', '\uefff', '😀']
const refused = ['\n', '\u0000', '\u001f', '\uf000', '\ufffd', '\ud800', '\udfff']
let seed = 7
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const randomText = (length: number, refusedShare: number) => {
  let text = ''
  for (let j = 0; j < length; j++) {
    const from = random() < refusedShare ? refused : pieces
    text += from[Math.floor(random() * from.length)]
  }
  return text
}

for (const [name, escape] of [['WebAssembly', escapeText], ['byte loop', escapeTextByLoop]] as const) {
  t.test(`${name}: JSON.stringify's escape, byte for byte`, async (t) => {
    let wrong = 0
    let wrongPath = 0
    let escaped = 0
    for (let i = 0; i < 6000; i++) {
      // every length from 0 to 40 (each place in an eight-byte step, and the last 0-7 bytes), then longer
      const text = randomText(i < 4100 ? i % 41 : Math.floor(random() * 3000), i % 5 === 0 ? 0.01 : 0)
      const result = escape(text)
      if ((result !== undefined) !== escapable(text)) wrongPath++
      if (result === undefined) continue
      escaped++
      if (Buffer.from(result.escaped).toString() !== expected(text) || Buffer.from(result.raw).toString() !== text) wrong++
    }
    t.equal(wrong, 0, 'the escaped bytes and the text\'s own UTF-8')
    t.equal(wrongPath, 0, 'undefined exactly for texts with a control, a lone surrogate or U+F000-U+FFFF')
    t.ok(escaped > 4000, `most texts escaped (${escaped})`)
    // a refused byte in the eight-byte steps and in the last bytes, after much that is not
    for (const text of ['"'.repeat(64) + '\n', '"'.repeat(64) + '\n' + 'x'.repeat(8), 'ab\\"cd\u0001', 'x'.repeat(15) + '\uf123']) t.equal(escape(text), undefined, JSON.stringify(text))
  })
}

t.test('texts that grow the memory, and beyond MAX_WASM_TEXT', async (t) => {
  for (const text of ['"\\'.repeat(40_000), 'é"'.repeat(70_000), 'x'.repeat(MAX_WASM_TEXT) + '"', '😀"'.repeat(MAX_WASM_TEXT / 3)]) {
    const result = escapeText(text)!
    t.ok(Buffer.from(result.escaped).toString() === expected(text) && Buffer.from(result.raw).toString() === text, `${text.length} units`)
  }
  // after growing, a short text is still right (the views are remade)
  t.equal(Buffer.from(escapeText('{"a":"b"}')!.escaped).toString(), '{\\"a\\":\\"b\\"}')
})
