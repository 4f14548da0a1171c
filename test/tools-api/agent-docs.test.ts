// The public agent documents (/SKILL.md, /skills/growth/SKILL.md, /llms.txt), the OpenAPI
// description and the browsable reference: no authentication, generated from the registry
// and PUBLIC_URL.
import t from 'tap'
import { buildTestApp, PUBLIC_URL } from '../helpers/app.ts'
import { growthSkillMarkdown, llmsTxt, skillMarkdown } from '../../docs/agent-docs.ts'

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** Every absolute http(s) address in a text. */
const addresses = (text: string) => text.match(/https?:\/\/[^\s`)"'<>]+/g) ?? []

t.test('agent documents', async (t) => {
  const app = await buildTestApp(t)
  const tools = app.registry.contracts()
  const names = tools.map((c) => c.name)
  const fetch = async (url: string, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'GET', url, headers })
    t.equal(res.statusCode, 200, url)
    return res
  }

  t.test('/SKILL.md', async (t) => {
    const res = await fetch('/SKILL.md')
    t.equal(res.headers['content-type'], 'text/markdown; charset=utf-8')
    const md = res.body
    t.match(md, /^---\nname: growthdesk\ndescription: .+\n---\n/, 'skill front matter')
    // Every tool, once, in the registry's order, as a list entry of the Tools section.
    const section = md.split('\n## Tools\n')[1]!.split('\n## ')[0]!
    const listed = [...section.matchAll(/^- `([a-z_]+)` — /gm)].map((m) => m[1])
    t.same(listed, names)
    for (const name of names) t.match(md, new RegExp('`' + name + '`'), name)
    const notTools = app.registry.operations().filter((op) => op.tool === false).map((op) => op.name)
    t.ok(notTools.length > 0, 'the registry has operations that are not tools')
    for (const notTool of notTools) t.notMatch(md, notTool)
    // Writers are marked.
    t.match(section, /- `add_memory` — .*\*\(writes\)\*/)
    t.notMatch(section.split('\n').find((l) => l.includes('`get_daily_ops`'))!, /writes/)

    t.match(md, new RegExp('`' + escape(`${PUBLIC_URL}/mcp`) + '`'))
    t.match(md, new RegExp('`' + escape(`${PUBLIC_URL}/v1`) + '`'))
    t.match(md, new RegExp('`' + escape(`${PUBLIC_URL}/api/v1/mcp`) + '`'))
    t.match(md, `${PUBLIC_URL}/skills/growth/SKILL.md`)
    t.match(md, `curl -s ${PUBLIC_URL}/v1/tools`)
    // Example arguments may carry addresses as data, on example.com only (RFC 2606): nothing to visit.
    t.same(addresses(md).filter((a) => !a.startsWith(`${PUBLIC_URL}/`) && !/^https:\/\/([a-z0-9-]+\.)*example\.com\//.test(a)), [], 'every address is under PUBLIC_URL')
    t.match(md, '`gdm_`')
    t.match(md, '`gds_`')
    t.match(md, 'Authorization: Bearer')
    t.match(md, 'X-Service-Project')
    t.match(md, '{"error": {"code": "invalid_arguments", "message": ')
    t.match(md, '"details": [{"path": ')
    for (const code of ['invalid_arguments', 'unauthorized', 'forbidden', 'review_access_required', 'not_found', 'conflict']) t.match(md, `\`${code}\``, code)
  })

  t.test('/skills/growth/SKILL.md', async (t) => {
    const res = await fetch('/skills/growth/SKILL.md')
    t.equal(res.headers['content-type'], 'text/markdown; charset=utf-8')
    const md = res.body
    t.match(md, /^---\nname: growthdesk-growth\ndescription: .+\n---\n/)
    t.match(md, 'never changes tool inputs')
    t.match(md, `${PUBLIC_URL}/SKILL.md`)
    t.same(addresses(md).filter((a) => !a.startsWith(PUBLIC_URL)), [])
    // Every tool it names exists.
    const named = [...md.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]!)
    t.ok(named.length >= 5)
    for (const name of named) t.ok(names.includes(name), `${name} is a tool`)
  })

  t.test('/llms.txt', async (t) => {
    const res = await fetch('/llms.txt')
    t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
    const text = res.body
    t.ok(text.startsWith('# growthdesk\n'), 'starts with the H1')
    const lines = text.split('\n')
    t.equal(lines.filter((l) => l.startsWith('# ')).length, 1, 'one H1')
    const summary = lines.find((l) => l.startsWith('> '))
    t.ok(summary, 'a > summary line')
    t.equal(lines.indexOf(summary!), 2, 'the summary follows the title')
    t.match(text, `[SKILL.md](${PUBLIC_URL}/SKILL.md)`)
    t.match(text, new RegExp(`\\]\\(${escape(`${PUBLIC_URL}/skills/growth/SKILL.md`)}\\)`))
    t.match(text, `(${PUBLIC_URL}/openapi.json)`)
    for (const name of names) t.match(text, new RegExp(`^- ${name}: `, 'm'), name)
    t.same(addresses(text).filter((a) => !a.startsWith(PUBLIC_URL)), [])
  })

  t.test('the documents are public and cacheable', async (t) => {
    for (const url of ['/SKILL.md', '/skills/growth/SKILL.md', '/llms.txt']) {
      const res = await fetch(url, { authorization: 'Bearer gds_not_a_real_key' })
      t.equal(res.headers['cache-control'], 'public, max-age=300', url)
      const head = await app.inject({ method: 'HEAD', url })
      t.equal(head.statusCode, 200, `HEAD ${url}`)
    }
  })

  t.test('the documents follow PUBLIC_URL and the registry, with nothing hard-coded', async (t) => {
    const url = 'https://growth.example.com'
    const skill = skillMarkdown(url, tools)
    const llms = llmsTxt(url, tools)
    const growth = growthSkillMarkdown(url)
    for (const [what, text] of [['SKILL.md', skill], ['llms.txt', llms], ['growth', growth]] as const) {
      t.notMatch(text, PUBLIC_URL, what)
      t.notMatch(text, /127\.0\.0\.1|localhost/, what)
      t.same(addresses(text).filter((a) => !a.startsWith(url)), [], what)
    }
    t.match(skill, `\`${url}/mcp\``)
    t.match(llms, `[SKILL.md](${url}/SKILL.md)`)
    // A tool that is added shows up without editing any text.
    const extra = { ...tools[0]!, name: 'brand_new_tool', description: 'Does something new. More text.' }
    t.match(skillMarkdown(url, [...tools, extra]), '- `brand_new_tool` — Does something new.')
    t.match(llmsTxt(url, [...tools, extra]), '- brand_new_tool: Does something new.')
  })

  t.test('/openapi.json describes every REST route', async (t) => {
    const res = await fetch('/openapi.json')
    t.match(res.headers['content-type'], /^application\/json/)
    const doc = res.json()
    t.match(doc.openapi, /^3\./)
    t.same(doc.servers, [{ url: PUBLIC_URL }])
    const expected: Record<string, string[]> = {
      '/v1/tools': ['get'],
      '/v1/tools/{name}': ['get'],
      '/v1/tools/get_daily_ops': ['post'],
      '/v1/tools/review_opportunity': ['post'],
      '/v1/tools/review_opportunities': ['post'],
      '/v1/projects': ['get', 'post'],
      '/v1/projects/{project}': ['get', 'patch'],
      '/v1/projects/{project}/memories': ['get', 'post'],
      '/v1/memories/{id}': ['patch', 'delete'],
      '/v1/workspace/tools': ['get'],
      '/v1/workspace/tools/{name}': ['put'],
      '/v1/events': ['post'],
      '/api/v1/mcp/projects/{project_id}/opportunities': ['get', 'post'],
      '/api/v1/mcp/projects/{project_id}/opportunities/{event_id}/review': ['patch'],
      '/api/v1/mcp/projects/{project_id}/overview': ['get'],
      '/api/v1/mcp/projects/{project_id}/daily-ops': ['get'],
      '/api/v1/mcp/projects/{project_id}/daily-event-summary': ['get'],
      '/api/v1/mcp/projects/{project_id}/event-stream': ['get'],
      '/SKILL.md': ['get'],
      '/skills/growth/SKILL.md': ['get'],
      '/llms.txt': ['get'],
      '/health': ['get'],
    }
    for (const [path, methods] of Object.entries(expected)) {
      t.ok(doc.paths[path], path)
      for (const method of methods) {
        const op = doc.paths[path]?.[method]
        t.ok(op, `${method.toUpperCase()} ${path}`)
        if (!op || path.startsWith('/SKILL') || path.startsWith('/skills') || path === '/llms.txt' || path === '/health') continue
        t.ok(op.summary, `${method} ${path} has a summary`)
        t.same(op.security, [{ bearer: [] }], `${method} ${path} needs a bearer credential`)
        t.ok(op.responses['200'] ?? op.responses['201'], `${method} ${path} documents its success`)
        t.ok(op.responses['4XX'] ?? op.responses['4xx'], `${method} ${path} documents its errors`)
      }
    }
    t.notOk(doc.paths['/openapi.json'], 'the description itself is hidden')
    t.same(Object.keys(doc.paths['/v1/tools/get_daily_ops'].post.responses).sort(), ['200', '4XX', '5XX'])
    t.ok(doc.paths['/v1/projects'].post.responses['201'], 'creation is documented as 201')
    t.ok(doc.paths['/v1/projects/{project}/memories'].post.responses['201'])
    t.match(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' })
    // The PATCH body of a project is the card patch: its fields, no id.
    const patchBody = doc.paths['/v1/projects/{project}'].patch.requestBody.content['application/json'].schema
    t.same(Object.keys(patchBody.properties).sort(), ['audience', 'channels', 'description', 'goals', 'name', 'slug', 'stage', 'timezone', 'value_proposition', 'website'])
  })

  t.test('/docs serves the browsable reference', async (t) => {
    let res = await app.inject({ method: 'GET', url: '/docs' })
    for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 3; hops++) {
      const location = new URL(String(res.headers.location), 'http://127.0.0.1/docs')
      res = await app.inject({ method: 'GET', url: location.pathname + location.search })
    }
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/html/)
    t.match(res.body, /<html/i)
    t.match(res.body, /swagger/i)
  })
})
