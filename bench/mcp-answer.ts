// npm run bench:mcp-answer [-- --rounds 21 --calls 3000]
//
// The CPU of writing a successful MCP tools/call answer in the fast lane (routes/mcp-fast.ts),
// in this process, no server, three ways: `string`, the answer as a string (the text block
// JSON.stringify's escape of the tool's text, then what the HTTP layer does with a string body:
// Fastify's Buffer.byteLength for Content-Length, Node's headers-plus-body string encoded to
// UTF-8); `loop`, okAnswerBytes with the text block escaped by core/json-escape.ts's byte loop
// (the UTF-8 bytes written once, sent as they are); `wasm`, okAnswerBytes as it ships, escaped
// by core/json-escape.wat. Run with npm start's WebAssembly flags (package.json), so that the
// module runs as it does in the server: on V8's baseline compiler. The texts: a
// list_opportunities page of 20 seed-demo opportunities (~10.7 kB, what bench:http's listing
// answers) and a get_daily_ops-sized text (~3 kB). Each text is rebuilt per call (no string is
// escaped or encoded twice), the ways take turns in a rotated order over the rounds, and the
// figures are process CPU (user + system) per call: minimum, first quartile and median of the
// rounds.
import { parseArgs } from 'node:util'
import { okAnswerBytes } from '../routes/mcp-fast.ts'
import { escapeTextByLoop } from '../core/json-escape.ts'
import { demoOpportunities } from '../bin/demo-data.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '21' }, calls: { type: 'string', default: '3000' } } })
const rounds = Number(values.rounds)
const calls = Number(values.calls)

const page = JSON.stringify({
  items: demoOpportunities('bench', 20).map((o, i) => ({
    event_id: `opp_${String(i).padStart(20, 'x')}`,
    contribution_type: o.type,
    key_information: o.lead.info,
    reason: o.lead.reason,
    suggested_action: o.lead.action,
    source_url: null,
    external_id: `b-${o.index}`,
    received_at: '2026-11-26T16:14:19.389Z',
    evaluation: '',
    status: 'pending',
    review_note: '',
    review_updated_at: null,
    version: 1,
    report_count: 1,
    merged_into: null,
    tags: [],
    assignee: null,
  })),
  page: 1,
  page_size: 20,
  total: 20,
  total_pages: 1,
  next_cursor: null,
})
const days = JSON.stringify({ project: 'prj_x', window: '30d', days: Array.from({ length: 30 }, (_, i) => ({ day: `2026-10-${String(i + 1).padStart(2, '0')}`, signups: i * 3, active_users: 100 + i, events: 190 + i * 7, conversions: i % 5, opportunities: i % 3 })) })
const tail = '},"jsonrpc":"2.0","id":1}'
const head = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 24436\r\nkeep-alive: timeout=72\r\n\r\n'

/** The text rebuilt from its pieces: a fresh string each call, as a tool's serializer writes one. */
function fresh(text: string) {
  const pieces = text.split(',"')
  return (i: number) => pieces.join(',"') + (i % 2 === 0 ? ' ' : '  ')
}
const ways = {
  string: (text: string) => {
    const body = `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}${tail}`
    return Buffer.byteLength(body) + Buffer.from(head + body).length
  },
  loop: (text: string) => okAnswerBytes(text, tail, escapeTextByLoop)!.length + Buffer.from(head).length,
  wasm: (text: string) => okAnswerBytes(text, tail)!.length + Buffer.from(head).length,
}
type Way = keyof typeof ways
const names = Object.keys(ways) as Way[]

console.log(`bench:mcp-answer — Node ${process.version}, ${rounds} rounds of ${calls} calls, load average ${(await import('node:os')).loadavg().map((n) => n.toFixed(2)).join(', ')}`)
for (const [label, text] of [['list_opportunities page', page], ['get_daily_ops-sized', days]] as const) {
  const next = fresh(text)
  const sample = next(0)
  const asString = `{"result":{"content":[{"type":"text","text":${JSON.stringify(sample)}}],"structuredContent":${sample}${tail}`
  if (!okAnswerBytes(sample, tail)?.equals(Buffer.from(asString)) || !okAnswerBytes(sample, tail, escapeTextByLoop)?.equals(Buffer.from(asString))) throw new Error('the ways write different answers')
  const cpu = Object.fromEntries(names.map((way) => [way, [] as number[]])) as Record<Way, number[]>
  for (let r = 0; r < rounds; r++) {
    for (const way of names.map((_, i) => names[(i + r) % names.length]!)) {
      for (let i = 0; i < 300; i++) ways[way](next(i))
      const start = process.cpuUsage()
      for (let i = 0; i < calls; i++) ways[way](next(i))
      const used = process.cpuUsage(start)
      cpu[way]!.push((used.user + used.system) / calls)
    }
  }
  const stat = (v: number[]) => { const s = [...v].sort((a, b) => a - b); return `min ${s[0]!.toFixed(1)}, p25 ${s[Math.floor(s.length / 4)]!.toFixed(1)}, median ${s[s.length >> 1]!.toFixed(1)} µs` }
  console.log(`${label} (${text.length} characters): ${names.map((way) => `${way} ${stat(cpu[way])}`).join('; ')}`)
}
