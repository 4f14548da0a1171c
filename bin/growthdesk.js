#!/usr/bin/env node
// The `growthdesk` executable. Node (22.18+, 24) runs the TypeScript itself: no build step, no loader.
// Node's compile cache goes on before any TypeScript is read (see start.js): a second run reads
// the modules already stripped and compiled.
// On an older Node: one line and exit code 1, before any TypeScript is imported (bin/node-version.js).
import module from 'node:module'
import { nodeVersionSupported } from './node-version.js'
if (!nodeVersionSupported()) process.exit(1)
module.enableCompileCache?.()
// A reader that stops early (`growthdesk tools --json | head`) closes the pipe: that ends the
// output, it is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err
    process.exit(process.exitCode ?? 0)
  })
}
const { main } = await import('./cli.ts')
process.exitCode = await main(process.argv.slice(2))
