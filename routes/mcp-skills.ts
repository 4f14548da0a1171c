// Skills over MCP (the `io.modelcontextprotocol/skills` extension, SEP-2640): SKILL.md and the
// growth skill, the very texts GET /SKILL.md and GET /skills/growth/SKILL.md serve, published at
// skill://growthdesk/SKILL.md and skill://growthdesk-growth/SKILL.md through `skills/list` and
// `skills/get` (each entry with the file's sha256 digest and size), and read with resources/read.
//
// The entries come from the SDK's skills extension (`@modelcontextprotocol/server/ext/skills`):
// `SkillCatalog.load` parses the frontmatter, checks the skill rules (a name that matches its
// folder, the limits) and computes the digests. Its `attach()` needs the SDK's high-level
// McpServer; growthdesk's MCP endpoint wires prebuilt handlers into a low-level Server per request
// (routes/mcp-server.ts), so the two methods are registered here, on that Server, answering with
// the catalog's entries. Loaded with the SDK, on the first MCP request.
import type { Resource, Server, StandardSchemaV1 } from '@modelcontextprotocol/server'
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server'
import { memorySkillFiles, SkillCatalog, SKILLS_EXTENSION_ID, SKILLS_GET_METHOD, SKILLS_LIST_METHOD, type Skill } from '@modelcontextprotocol/server/ext/skills'
import type { FastifyBaseLogger } from 'fastify'

/** One skill document: its name (the folder, and its frontmatter's `name`) and its text. */
export interface SkillDocument {
  name: string
  text: string
}

export interface McpSkills {
  /** The server capability that declares the extension. */
  capability: Record<string, Record<string, never>>
  /** Each skill's SKILL.md as a resource of resources/list, in the order of the documents given. */
  resources: Resource[]
  /** The URI of a skill's SKILL.md. */
  uriOf(name: string): string
  /** The text of a skill file, or undefined when `uri` names none. */
  read(uri: string): { uri: string; mimeType: string; text: string } | undefined
  /** Registers `skills/list` and `skills/get` on a server (before it connects). */
  install(server: Server): void
  /** The entries `skills/list` answers with. */
  entries: readonly Skill[]
}

/** A 2026-07-28 result is cacheable (ttlMs, cacheScope); the documents change only with a deployment. */
const CACHE = { ttlMs: 300_000, cacheScope: 'public' as const }

/** A StandardSchema for a method's params: what the SDK validates them with before the handler. */
function paramsSchema<T>(check: (value: Record<string, unknown>) => T | { problem: string }): StandardSchemaV1<unknown, T> {
  return {
    '~standard': {
      version: 1,
      vendor: 'growthdesk',
      validate(value) {
        const params = value === undefined ? {} : value
        if (params === null || typeof params !== 'object' || Array.isArray(params)) return { issues: [{ message: 'params must be an object' }] }
        const checked = check(params as Record<string, unknown>)
        return checked !== null && typeof checked === 'object' && 'problem' in checked ? { issues: [{ message: checked.problem as string }] } : { value: checked as T }
      },
    },
  }
}

const ListParams = paramsSchema((p) => (p.cursor === undefined || typeof p.cursor === 'string' ? { cursor: p.cursor as string | undefined } : { problem: 'cursor must be a string' }))
const GetParams = paramsSchema((p) => (typeof p.uri === 'string' ? { uri: p.uri } : { problem: 'uri must be a string: the URI of a skill\'s SKILL.md' }))

/** Builds the catalog once (strict: a document that breaks a skill rule stops the MCP server from loading). */
export async function createMcpSkills(documents: readonly SkillDocument[], log: FastifyBaseLogger): Promise<McpSkills> {
  const files = Object.fromEntries(documents.map((d) => [`${d.name}/SKILL.md`, d.text]))
  const catalog = await SkillCatalog.load(memorySkillFiles(files), { strict: true, onWarning: (w) => log.warn({ skill: w.path }, w.message) })
  const entries = catalog.entries
  const uriOf = (name: string) => `skill://${name}/SKILL.md`
  const texts = new Map(documents.map((d) => [uriOf(d.name), d.text]))
  const resources: Resource[] = documents.map((d) => entries.find((e) => e.uri === uriOf(d.name))!).map((skill) => ({
    uri: skill.uri,
    name: skill.frontmatter.name,
    description: skill.frontmatter.description,
    mimeType: 'text/markdown',
  }))

  /** The caching fields of a 2026-07-28 answer; a 2025 one carries none. */
  const cacheFields = (server: Server) => ((server.getNegotiatedProtocolVersion() ?? '') >= '2026-07-28' ? CACHE : {})

  return {
    capability: { [SKILLS_EXTENSION_ID]: {} },
    resources,
    uriOf,
    entries,
    read(uri) {
      const text = texts.get(uri)
      return text === undefined ? undefined : { uri, mimeType: 'text/markdown', text }
    },
    install(server) {
      server.setRequestHandler(SKILLS_LIST_METHOD, { params: ListParams }, ({ cursor }) => {
        // One page holds every skill: no cursor is ever handed out, so none is valid.
        if (cursor !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${cursor}`)
        return { skills: [...entries], ...cacheFields(server) }
      })
      server.setRequestHandler(SKILLS_GET_METHOD, { params: GetParams }, ({ uri }) => {
        const skill = entries.find((s) => s.uri === uri)
        if (!skill) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No skill is served at ${uri}`, { uri })
        return { skill, ...cacheFields(server) }
      })
    },
  }
}
