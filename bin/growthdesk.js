#!/usr/bin/env node
// The `growthdesk` executable: runs bin/cli.ts through tsx, so the checkout needs no build step.
import { fileURLToPath } from 'node:url'
import { register } from 'tsx/esm/api'

// Our own tsconfig, not whichever one the caller's working directory would lead tsx to.
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) })
const { main } = await import('./cli.ts')
process.exitCode = await main(process.argv.slice(2))
