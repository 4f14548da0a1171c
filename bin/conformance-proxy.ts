// A loopback proxy for the official MCP conformance suite, which sends no Authorization header:
// it forwards every request to a growthdesk server with `Authorization: Bearer <key>` added, and
// maps its own port back to the server's in Host and Origin, so the suite's DNS-rebinding checks
// see the server's own answers. `npm run conformance` (bin/conformance.ts) starts one; by hand:
//
//   node bin/conformance-proxy.ts --target http://127.0.0.1:3000 --key gds_… --port 3100
//   npx @modelcontextprotocol/conformance@0.2.0-alpha.12 server --url http://127.0.0.1:3100/mcp --requirements 2026-07-28
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'

const http = process.getBuiltinModule('node:http')

export interface ConformanceProxy {
  /** The proxy's own address, e.g. http://127.0.0.1:3100 */
  url: string
  close(): Promise<void>
}

/** Starts the proxy on 127.0.0.1 (`port` 0: any free port) in front of `target` (http://host:port). */
export async function startConformanceProxy(options: { target: string; key: string; port?: number }): Promise<ConformanceProxy> {
  const target = new URL(options.target)
  const server = http.createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as { port: number }
  // The suite addresses the proxy; the server must see requests addressed to itself.
  const swap = (value: string | undefined) => value?.replace(`127.0.0.1:${port}`, target.host).replace(`localhost:${port}`, target.host)
  server.on('request', (req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${options.key}`, host: swap(req.headers.host) }
    if (req.headers.origin) headers.origin = swap(req.headers.origin)
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(String(err))
    })
    // A client that goes away (the suite closing an SSE stream) ends the upstream request too.
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

async function main() {
  const { values } = parseArgs({
    options: { target: { type: 'string' }, key: { type: 'string' }, port: { type: 'string', default: '3100' } },
  })
  const key = values.key ?? process.env.SERVICE_API_KEY
  if (!values.target || !key) {
    process.stderr.write('usage: node bin/conformance-proxy.ts --target http://127.0.0.1:3000 --key gds_… [--port 3100]\n(the key may also come from SERVICE_API_KEY)\n')
    process.exit(2)
  }
  const proxy = await startConformanceProxy({ target: values.target, key, port: Number(values.port) })
  process.stdout.write(`conformance proxy: ${proxy.url}/mcp → ${values.target}/mcp (with the key)\n`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main()
