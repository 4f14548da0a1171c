#!/usr/bin/env node
// The `growthdesk` executable. Node (22.18+, 24) runs the TypeScript itself: no build step, no loader.
const { main } = await import('./cli.ts')
process.exitCode = await main(process.argv.slice(2))
