// A guard on postgres.js until a release has its own. In postgres 3.4.9 (the latest) a transaction
// whose connection the database drops can end the process: `closed()` sets the connection's
// socket to null and then rejects the query in flight; the transaction's rollback that follows
// is a small write deferred to a setImmediate, which then calls `socket.write` on null — an
// exception thrown from a timer, that no caller can catch (porsager/postgres#1154, #1208; the fix
// proposed in #1209 is not released). Teardown also cancels a deferred write without forgetting
// it, so the connection, once reconnected, never flushes a small write again (it hangs).
//
// The module's source is patched as it loads (Node's in-thread module hooks, node:module
// registerHooks, Node ≥ 22.15): a deferred write on a closed connection rejects its queries with
// CONNECTION_CLOSED instead, and teardown forgets a cancelled write. Each patch applies only to
// the exact text it was written for: another version of the file is loaded as it is, and
// `postgresGuard.applied` stays false (test/resilience.test.ts checks it on the installed version).
import module from 'node:module'

export const postgresGuard = { installed: false, applied: false }

const PATCHES: [string, string][] = [
  [
    'function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
    "function nextWrite(fn) {\n    if (!socket) {\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)",
  ],
  [
    '    clearImmediate(nextWriteTimer)\n    socket.removeListener(\'data\', data)',
    '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener(\'data\', data)',
  ],
  [
    '    clearImmediate(nextWriteTimer)\n    if (socket) {',
    '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    if (socket) {',
  ],
]

/** Patches postgres.js's connection module when it loads; call before the first import of 'postgres'. */
export function installPostgresGuard(): void {
  if (postgresGuard.installed || typeof module.registerHooks !== 'function') return
  postgresGuard.installed = true
  module.registerHooks({
    load(url, context, nextLoad) {
      const result = nextLoad(url, context)
      if (!/\/node_modules\/postgres\/src\/connection\.js$/.test(url) || result.source === undefined) return result
      const source = String(result.source)
      if (!PATCHES.every(([from]) => source.split(from).length === 2)) return result
      postgresGuard.applied = true
      return { ...result, source: PATCHES.reduce((text, [from, to]) => text.replace(from, to), source) }
    },
  })
}
