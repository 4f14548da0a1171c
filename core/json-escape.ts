// A JSON text as the body of a JSON string, in UTF-8: what an MCP answer's text block carries
// (routes/mcp-fast.ts). The text is JSON already, so JSON.stringify would escape only `"` and `\`
// in it — but V8 does that a character at a time, and so did a byte loop in JS (~28 µs for a
// 10.7 kB listing page on the machine measured). core/json-escape.wat does it
// eight bytes a step with WebAssembly SIMD: ~9.8 µs for the same page as `npm start` runs it
// (V8's baseline compiler only, start.js), ~6 µs optimized (docs/benchmarks.md, "MCP's text
// block"). Where WebAssembly's SIMD is missing (V8 refuses the module on a CPU without SSE4.1),
// and for a text over MAX_WASM_TEXT, the same is done by the byte loop.
import { JSON_ESCAPE_WASM } from './json-escape-wasm.ts'

/**
 * What JSON.stringify does to each byte of a string's UTF-8 form: 0 nothing, 1 a backslash before
 * it (`"` and `\`), 2 more than this table says — a control character (escaped as `\n`, `\u0001`…)
 * or 0xEF, the lead byte of U+F000–U+FFFF and so of U+FFFD, which is what a lone surrogate
 * becomes in UTF-8 (JSON.stringify writes `\udXXX` for it): such a text is left to
 * JSON.stringify itself. Every other byte, ASCII or part of a multi-byte character, JSON.stringify
 * leaves as it is.
 */
const ESCAPES = new Uint8Array(256)
ESCAPES[0x22] = ESCAPES[0x5c] = 1
for (let c = 0; c < 0x20; c++) ESCAPES[c] = 2
ESCAPES[0xef] = 2

/** A text and its escaped form, as UTF-8. Views of memory that the next call writes over: copy
 * them out before anything else runs. */
export interface EscapedText {
  raw: Uint8Array
  escaped: Uint8Array
}

/** The longest text (in UTF-16 units) escaped in the WebAssembly memory, which grows to hold it
 * (3 bytes a unit in and 6 out, at most) and never shrinks: ~4.7 MB at most. */
export const MAX_WASM_TEXT = 512 * 1024

/** The byte loop: the text's UTF-8 into `raw`, escaped into `out`; the length written, or -1. */
function escapeLoop(raw: Uint8Array, n: number, out: Uint8Array): number {
  let p = 0
  for (let i = 0; i < n; i++) {
    const c = raw[i]!
    const escape = ESCAPES[c]
    if (escape !== 0) {
      if (escape === 2) return -1
      out[p++] = 0x5c
    }
    out[p++] = c
  }
  return p
}

/** The byte loop's buffers, reused from call to call (a longer text gets buffers of its own). */
const loopRaw = Buffer.allocUnsafeSlow(64 * 1024)
const loopOut = Buffer.allocUnsafeSlow(128 * 1024)

/** escapeText by the byte loop: where V8 cannot run the module, for a text over MAX_WASM_TEXT, and
 * for the tests and bench:mcp-answer. The same answer, valid until the next call. */
export function escapeTextByLoop(text: string): EscapedText | undefined {
  const raw = text.length * 3 <= loopRaw.length ? loopRaw : Buffer.allocUnsafe(text.length * 3)
  const n = raw.write(text, 0, 'utf8')
  const out = 2 * n <= loopOut.length ? loopOut : Buffer.allocUnsafe(2 * n)
  const m = escapeLoop(raw, n, out)
  return m < 0 ? undefined : { raw: raw.subarray(0, n), escaped: out.subarray(0, m) }
}

/** core/json-escape.wat's two tables, for each 8-bit mask of the bytes that take a backslash: the
 * swizzle pattern that spreads eight bytes over 8 + (the mask's bit count), 0x80 (a zero) before
 * each masked byte and after the last, and the backslashes to OR into those zeros. */
function escapeTables(memory: Uint8Array): void {
  for (let mask = 0; mask < 256; mask++) {
    const swizzle = memory.subarray(mask * 16, mask * 16 + 16).fill(0x80)
    const backslashes = memory.subarray(4096 + mask * 16, 4096 + mask * 16 + 16).fill(0)
    let p = 0
    for (let j = 0; j < 8; j++) {
      if (mask & (1 << j)) backslashes[p++] = 0x5c
      swizzle[p++] = j
    }
  }
}

/** Where the text goes in the memory: after the tables. */
const INPUT = 8192

interface WasmEscaper {
  memory: WebAssembly.Memory
  escape: (input: number, n: number, out: number) => number
  /** The memory's bytes (a new view after each growth). */
  bytes: Buffer
}

/** The module, instantiated once; undefined where V8 cannot run it. */
function wasmEscaper(): WasmEscaper | undefined {
  if (typeof WebAssembly !== 'object') return undefined
  const code = Buffer.from(JSON_ESCAPE_WASM, 'base64')
  if (!WebAssembly.validate(code)) return undefined
  const { exports } = new WebAssembly.Instance(new WebAssembly.Module(code))
  const memory = exports.memory as WebAssembly.Memory
  const bytes = Buffer.from(memory.buffer)
  escapeTables(bytes)
  return { memory, escape: exports.escape as WasmEscaper['escape'], bytes }
}

let escaper: WasmEscaper | undefined | null = null
/** The module, instantiated by the first call that needs it; undefined where V8 cannot run it. */
const loadedEscaper = () => (escaper === null ? (escaper = wasmEscaper()) : escaper)

/**
 * `text` (a JSON text) as UTF-8, and as the body of a JSON string: byte for byte what
 * JSON.stringify(text).slice(1, -1) encodes to. Undefined when a byte needs more than a backslash
 * (see ESCAPES): the caller then uses JSON.stringify. The views are valid until the next call.
 */
export function escapeText(text: string): EscapedText | undefined {
  const wasm = loadedEscaper()
  if (wasm === undefined || text.length > MAX_WASM_TEXT) return escapeTextByLoop(text)
  // Room for the UTF-8 (3 bytes a unit at most), then for the escaped bytes (twice those) and
  // the last step's 16-byte store.
  const room = INPUT + text.length * 9 + 16
  if (wasm.bytes.length < room) {
    wasm.memory.grow(Math.ceil((room - wasm.bytes.length) / 65536))
    wasm.bytes = Buffer.from(wasm.memory.buffer)
  }
  const { bytes } = wasm
  const n = bytes.write(text, INPUT, 'utf8')
  const out = INPUT + n
  const m = wasm.escape(INPUT, n, out)
  return m < 0 ? undefined : { raw: bytes.subarray(INPUT, out), escaped: bytes.subarray(out, out + m) }
}

/** Which implementation escapeText uses here (for tests and benches). */
export function escapeImplementation(): 'wasm' | 'loop' {
  return loadedEscaper() ? 'wasm' : 'loop'
}
