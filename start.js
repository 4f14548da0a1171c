// `npm start`: turns on Node's compile cache before any TypeScript is read, then runs server.ts.
// Node strips types with a WebAssembly transformer it loads on first use (about 55 ms and 16 MB
// of memory); with the cache on from the first line, a warm start reads every module — server.ts
// included — already stripped and compiled, and never loads it. `node server.ts` works as well.
//
// npm start's flags: a young generation of 16 MB semi-spaces, chosen by measuring CPU per call
// against RSS (docs/benchmarks.md, "The shipped configuration": 8 MB cost ~0.9× the server CPU
// per call of 4 MB and 30–80 MB less RSS under load, as fewer short-lived objects are promoted to
// the old generation; 16 MB, measured on a quiet machine, ~0.92–0.97× the CPU per call of 8 MB
// for ~20 MB more RSS under load; the same idle RSS for all, since server.ts's start-up
// collection shrinks the young generation back), --expose-gc for the one memory-reducing collection server.ts makes a second
// after the start (and then takes off the global object), and PGlite's WebAssembly run by V8's
// baseline compiler only (Liftoff).
// Optimizing PostgreSQL's largest functions took V8 over 500 MB of memory for a moment (a
// process peaked at 740–770 MB under load, against 245 MB without) and 50 MB kept afterwards;
// the API's requests are as fast, a heavy SQL query about half as fast. PostgreSQL as the
// database runs no WebAssembly: there the two flags change nothing.
// On a Node too old to strip types, one line and exit code 1 instead of a stack trace
// (bin/node-version.js); the TypeScript is only imported after that check.
import module from 'node:module'
import { nodeVersionSupported } from './bin/node-version.js'
if (!nodeVersionSupported()) process.exit(1)
module.enableCompileCache?.()
await import('./server.ts')
