// /SKILL.md's own first calls, performed: each `curl` example of "First calls, one per key kind"
// is parsed out of the served document, given a real key of its kind (and the real project
// for `my-project`) and sent to a listening app. If an example breaks, this test fails. Also:
// the 401 the document explains is the one a wrong kind of key gets, and every project-side
// route it lists exists.
import t from 'tap'
import { listenTestApp, seedWorkspace } from '../helpers/app.ts'

interface Curl {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
}

/** Splits a shell line into words, honouring '…' and "…" (enough for the document's examples). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!)
}

/** The request a `curl` command line makes, with $VARIABLES replaced from `vars`. */
function parseCurl(block: string, vars: Record<string, string>): Curl {
  const line = block.split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n').replace(/\\\n/g, ' ')
  const expanded = line.replace(/\$([A-Z_]+)/g, (_, name: string) => {
    if (!(name in vars)) throw new Error(`the example uses $${name}, which the test does not know`)
    return vars[name]!
  })
  const argv = words(expanded)
  if (argv.shift() !== 'curl') throw new Error(`not a curl command: ${block}`)
  const curl: Curl = { method: 'GET', url: '', headers: {} }
  while (argv.length) {
    const word = argv.shift()!
    if (word === '-s') continue
    else if (word === '-X') curl.method = argv.shift()!
    else if (word === '-H') {
      const [name, ...value] = argv.shift()!.split(':')
      curl.headers[name!.trim().toLowerCase()] = value.join(':').trim()
    } else if (word === '-d') {
      curl.body = argv.shift()!
      if (curl.method === 'GET') curl.method = 'POST'
    } else if (/^https?:\/\//.test(word)) curl.url = word
    else throw new Error(`unexpected curl word '${word}'`)
  }
  return curl
}

/** The ```sh blocks of the section under `### <heading…>`. */
function examplesUnder(md: string, heading: string): string[] {
  const start = md.indexOf(`\n### ${heading}`)
  if (start === -1) throw new Error(`no section '### ${heading}'`)
  const section = md.slice(start + 1).split(/\n##+ /)[0]!
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

t.test('/SKILL.md: every first call works as written', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const md = await (await fetch(`${url}/SKILL.md`)).text()
  const send = async (curl: Curl) => {
    const res = await fetch(curl.url, { method: curl.method, headers: curl.headers, body: curl.body })
    return { status: res.status, json: await res.json() as Record<string, unknown> }
  }
  const project = (block: string) => block.replaceAll('my-project', ws.project.slug)

  const cases: { heading: string; vars: Record<string, string>; expect: (j: Record<string, unknown>) => boolean }[] = [
    { heading: 'MCP API key (`gdm_`)', vars: { GROWTHDESK_MCP_KEY: ws.keys.mcp }, expect: (j: Record<string, unknown>) => (j.project as { id: string }).id === ws.project.id },
    { heading: 'Service key (`gds_`)', vars: { SERVICE_API_KEY: ws.keys.service }, expect: (j: Record<string, unknown>) => Array.isArray((j.result as { days: unknown[] }).days) },
    { heading: 'Ingest key (`gdi_`)', vars: { GROWTHDESK_INGEST_KEY: ws.keys.ingest }, expect: (j: Record<string, unknown>) => j.accepted === 1 },
    {
      heading: 'MCP (`gdm_` or `gds_`)',
      vars: { GROWTHDESK_MCP_KEY: ws.keys.mcp },
      expect: (j: Record<string, unknown>) => {
        const result = j.result as { isError?: boolean; structuredContent?: { project?: { id: string } } } | undefined
        return j.jsonrpc === '2.0' && result?.isError !== true && result?.structuredContent?.project?.id === ws.project.id
      },
    },
  ]
  for (const c of cases) {
    await t.test(c.heading, async (t) => {
      const blocks = examplesUnder(md, c.heading)
      t.equal(blocks.length, 1, 'one example')
      const curl = parseCurl(project(blocks[0]!), c.vars)
      t.ok(curl.url.startsWith(`${url}/`), `under PUBLIC_URL: ${curl.method} ${curl.url}`)
      const res = await send(curl)
      t.equal(res.status, 200, 'the example succeeds')
      t.ok(c.expect(res.json), 'with the promised result')
      if (res.status !== 200) t.comment(JSON.stringify(res.json))
    })
  }

  await t.test('the same MCP example works with a service key', async (t) => {
    const curl = parseCurl(project(examplesUnder(md, 'MCP (`gdm_` or `gds_`)')[0]!), { GROWTHDESK_MCP_KEY: ws.keys.service })
    const res = await send(curl)
    t.equal(res.status, 200)
    t.notOk((res.json.result as { isError?: boolean }).isError)
  })

  await t.test('the MCP example\'s headers are the ones the document says matter', async (t) => {
    const curl = parseCurl(project(examplesUnder(md, 'MCP (`gdm_` or `gds_`)')[0]!), { GROWTHDESK_MCP_KEY: ws.keys.mcp })
    t.match(curl.headers, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': /^2025-/ })
    const { 'content-type': _, ...withoutType } = curl.headers
    t.equal((await fetch(curl.url, { method: 'POST', headers: withoutType, body: curl.body })).status, 415, 'without Content-Type: 415, as documented')
    const unknown = await fetch(curl.url, { method: 'POST', headers: { ...curl.headers, 'mcp-protocol-version': '1999-01-01' }, body: curl.body })
    t.equal(unknown.status, 400, 'an unknown MCP-Protocol-Version: 400, as documented')
    for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
      t.match(md, version)
      const res = await fetch(curl.url, { method: 'POST', headers: { ...curl.headers, 'mcp-protocol-version': version }, body: curl.body })
      t.equal(res.status, 200, `${version} works as shown`)
      t.notOk(((await res.json()) as { result?: { isError?: boolean } }).result?.isError)
    }
    t.match(md, 'is required (else 415)')
    t.match(md, 'an unknown one gets 400')
  })

  await t.test('the 401 the document explains is the one a wrong kind of key gets', async (t) => {
    const service = parseCurl(project(examplesUnder(md, 'Service key (`gds_`)')[0]!), { SERVICE_API_KEY: ws.keys.mcp })
    const refused = await send(service)
    t.equal(refused.status, 401, 'a gdm_ key on the tools REST API: 401')
    const message = (refused.json.error as { message: string }).message
    const quoted = /\*\*`401 (This endpoint takes a service key \(gds_\)) …`\*\*/.exec(md)
    t.ok(quoted, 'the document quotes the message')
    t.ok(message.startsWith(quoted![1]!), `and it is the message sent: ${message}`)
    const projectSide = parseCurl(project(examplesUnder(md, 'MCP API key (`gdm_`)')[0]!), { GROWTHDESK_MCP_KEY: ws.keys.service })
    const other = await send(projectSide)
    t.equal(other.status, 401, 'a gds_ key on the project-side API: 401')
    t.match((other.json.error as { message: string }).message, /^This endpoint takes a project-side MCP API key \(gdm_\)/, 'as the document says')
    const ingestElsewhere = await send(parseCurl(project(examplesUnder(md, 'MCP API key (`gdm_`)')[0]!), { GROWTHDESK_MCP_KEY: ws.keys.ingest }))
    t.equal(ingestElsewhere.status, 401, 'an ingest key anywhere but events: 401, as the table says')
  })

  await t.test('every project-side route listed exists, with the method listed', async (t) => {
    const openapi = await (await fetch(`${url}/openapi.json`)).json() as { paths: Record<string, Record<string, unknown>> }
    const listed = [...md.matchAll(/^\| `(GET|POST|PATCH|PUT|DELETE) (\/api\/v1\/mcp\/[^`]+)` \| `([a-z_]+)`/gm)]
    t.ok(listed.length >= 8, `${listed.length} routes listed`)
    for (const [, method, path, tool] of listed) {
      const openapiPath = path!.replace('{project}', '{project_id}')
      t.ok(openapi.paths[openapiPath]?.[method!.toLowerCase()], `${method} ${path} exists`)
      t.ok(app.registry.names().includes(tool!), `${tool} is a tool`)
    }
  })

  await t.test('each tool is listed with the argument names of its schema', async (t) => {
    for (const tool of app.registry.contracts()) {
      const line = md.split('\n').find((l) => l.startsWith(`- \`${tool.name}\` — `))
      const names = [...(line?.split(' Arguments: ')[1] ?? '').matchAll(/`([a-z_]+)\??`/g)].map((m) => m[1])
      t.same(names, Object.keys(tool.input_schema.properties ?? {}), tool.name)
    }
  })
})
