// postgres.js' pool queue as installed (patches/postgres+3.4.9.patch, db/postgres-patch.ts). The
// pool moves a connection between its queues (open, busy, full…) on every query: shift() the
// next connection, remove() it from the queue it was in, push() it onto the next. Unpatched,
// shift() left a hole at the front that only a shift() of the last element dropped, and remove()
// searched from the first hole: after a burst with every connection busy, every later query
// scanned all the holes so far (the bench's reference server went from 41 to 123 µs of CPU a
// request over 40 s of load, docs/benchmarks.md). Here: the queue still behaves as a queue, and
// what remove() scans after such a burst stays the size of the queue, not of the burst.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { postgresQueueFiles, postgresQueuePatched } from '../db/postgres-patch.ts'

interface Queue<T> { readonly length: number; push(x: T): T; shift(): T | undefined; remove(x: T): T | null }

const files = postgresQueueFiles()
const { default: Queue } = (await import(pathToFileURL(files[0]!.file).href)) as { default: <T>(initial?: T[]) => Queue<T> }

t.test('every build of postgres.js carries the patch (ES module, CommonJS, Workers)', async (t) => {
  for (const { file, patched } of files) t.ok(patched, file)
  t.ok(postgresQueuePatched(), 'the module the app imports is patched')
})

t.test('an unpatched postgres.js is told apart (what server.ts warns about)', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gd-postgres-'))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  // postgres.js 3.4.9's own remove(), as published.
  const upstream = 'export default Queue\nfunction Queue(initial = []) {\n  let xs = initial.slice()\n  let index = 0\n  return {\n    remove: (x) => {\n      const index = xs.indexOf(x)\n      return index === -1\n        ? null\n        : (xs.splice(index, 1), x)\n    },\n  }\n}\n'
  for (const dir of ['src', 'cjs/src']) {
    fs.mkdirSync(path.join(root, dir), { recursive: true })
    fs.writeFileSync(path.join(root, dir, 'queue.js'), upstream)
  }
  t.same(postgresQueueFiles(root).map((f) => f.patched), [false, false, false], 'as published, and a build missing')
  fs.copyFileSync(files[0]!.file, path.join(root, 'src', 'queue.js'))
  t.same(postgresQueueFiles(root).map((f) => f.patched), [true, false, false], 'the patched file')
})

t.test('a queue: first in, first out; remove() takes any element once', async (t) => {
  const q = Queue<string>(['a'])
  q.push('b')
  q.push('c')
  q.push('d')
  t.equal(q.length, 4)
  t.equal(q.shift(), 'a')
  t.equal(q.remove('c'), 'c', 'an element in the middle')
  t.equal(q.remove('c'), null, 'not twice')
  t.equal(q.remove('a'), null, 'not one shifted out')
  t.equal(q.length, 2)
  t.equal(q.shift(), 'b')
  t.equal(q.shift(), 'd')
  t.equal(q.length, 0)
  q.push('e')
  t.equal(q.remove('e'), 'e', 'emptied by remove()')
  t.equal(q.length, 0)
  q.push('f')
  t.equal(q.shift(), 'f', 'and used again')
  // Shifted far past the compaction point, order and length hold.
  const r = Queue<number>()
  let next = 0
  const out: number[] = []
  for (let i = 0; i < 5000; i++) {
    r.push(next++)
    r.push(next++)
    out.push(r.shift()!)
  }
  t.equal(r.length, 5000)
  while (r.length > 0) out.push(r.shift()!)
  t.same(out, Array.from({ length: 10_000 }, (_, i) => i), 'every element once, in order')
})

t.test("after a burst with every connection busy, remove() scans the queue, not the burst's holes", async (t) => {
  const busy = Queue<object>()
  const connections = Array.from({ length: 10 }, () => ({}))
  for (const c of connections) busy.push(c)
  // 20,000 queries while all ten are busy: the pool's `go(busy.shift(), query)`, then move(c, busy).
  for (let i = 0; i < 20_000; i++) {
    const c = busy.shift()!
    busy.remove(c)
    busy.push(c)
  }
  // The burst ends: each connection becomes idle (move(c, open) removes it from busy).
  for (const c of connections) t.equal(busy.remove(c), c)
  t.equal(busy.length, 0)
  // A later query: one connection goes through busy. How long are the arrays remove() searches?
  const later = {}
  busy.push(later)
  const scanned: number[] = []
  const indexOf = Array.prototype.indexOf
  // The search itself is what is measured: indexOf is watched for this one call, and put back.
  // eslint-disable-next-line no-extend-native
  Array.prototype.indexOf = function (this: unknown[], ...args: Parameters<typeof indexOf>) {
    if (args[0] === later) scanned.push(this.length - (args[1] ?? 0))
    return indexOf.apply(this, args)
  }
  try {
    t.equal(busy.remove(later), later)
  } finally {
    // eslint-disable-next-line no-extend-native
    Array.prototype.indexOf = indexOf
  }
  t.ok(scanned.length >= 1, 'remove() searched with indexOf')
  t.ok(scanned.every((n) => n <= connections.length), `remove() searched ${scanned.join(', ')} entries (unpatched: over 20,000)`)
})
