// MCP App views: the MCP Apps extension (`io.modelcontextprotocol/ui`, SEP-1865) on /mcp. Each
// view is a `ui://growthdesk/…` resource, one self-contained HTML document built here once from
// views/mcp-apps/ — its page, the shared and its own script, and the ext-apps App bundle
// (`@modelcontextprotocol/ext-apps/app-with-deps`) inlined, so that it loads nothing from any
// origin (its CSP metadata declares no domain at all). A tool names its view in its operation
// (`ui`, core/operations.ts); routes/mcp-server.ts lists these resources, reads them and declares
// the extension. Deliberately free of SDK imports, like the other modules the route loads.
import fs from 'node:fs'
import type { ToolUi } from '../core/operations.ts'

export const UI_EXTENSION_ID = 'io.modelcontextprotocol/ui'
/** The one content type of MCP App views. */
export const UI_MIME_TYPE = 'text/html;profile=mcp-app'

/** What the server declares under `capabilities.extensions`: in the 2025 initialize result and
 * the 2026-07-28 server/discover alike (SEP-1724's map of extension id → settings). */
export const uiExtension = { [UI_EXTENSION_ID]: { mimeTypes: [UI_MIME_TYPE] } }

interface View {
  uri: string
  name: string
  title: string
  description: string
  /** Its files in views/mcp-apps/: `<file>.html` and `<file>.js`. */
  file: string
}

export const views: readonly View[] = [
  {
    uri: 'ui://growthdesk/board',
    name: 'board',
    title: 'Opportunity triage board',
    description: 'The opportunities of a list_opportunities result as a compact board, each reviewed in place (useful / not useful, status, note).',
    file: 'board',
  },
  {
    uri: 'ui://growthdesk/daily-ops',
    name: 'daily-ops',
    title: 'Daily metrics chart',
    description: 'A get_daily_ops window or range as daily charts of registrations, daily users and events, today\'s partial day marked.',
    file: 'daily-ops',
  },
]

/**
 * Each view's `_meta.ui`, in the listing and with the content: no origin for anything (every CSP
 * list empty, which hosts turn into the extension's restrictive default policy), and a border.
 */
const viewMeta = {
  ui: {
    csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
    prefersBorder: true,
  },
}

/** The views as `resources/list` lists them. */
export const viewResources = views.map(({ uri, name, title, description }) => ({ uri, name, title, description, mimeType: UI_MIME_TYPE, _meta: viewMeta }))

/** A tool's `_meta` in tools/list: `ui` as the extension defines it, plus the flat
 * `ui/resourceUri` that hosts of the extension's first drafts read (ext-apps' own
 * `registerAppTool` writes both). */
export function toolMeta(ui: ToolUi): Record<string, unknown> {
  return { ui, 'ui/resourceUri': ui.resourceUri }
}

/** `resources/read` of a view, or undefined for a URI that is none. */
export function readView(uri: string) {
  const view = views.find((v) => v.uri === uri)
  if (!view) return undefined
  return { contents: [{ uri, mimeType: UI_MIME_TYPE, text: viewDocument(view), _meta: viewMeta }] }
}

const SOURCES = new URL('../views/mcp-apps/', import.meta.url)
const EXT_APPS = '@modelcontextprotocol/ext-apps'
const documents = new Map<string, string>()

/** A view's document, built on its first read and kept. */
export function viewDocument(view: View): string {
  let document = documents.get(view.uri)
  if (document === undefined) {
    document = buildDocument(view.file)
    documents.set(view.uri, document)
  }
  return document
}

const read = (name: string) => fs.readFileSync(new URL(name, SOURCES), 'utf8')

/**
 * The page with the shared style and one module script: the App bundle, then, in a block of their
 * own (the bundle's minified top-level names stay out of their way), bindings for what the view
 * scripts import from ext-apps, view.js and the view's script, their imports and exports removed.
 */
function buildDocument(file: string): string {
  const page = read(`${file}.html`)
  const bundle = appBundle()
  const imported = new Set<string>()
  const scripts = ['view.js', `${file}.js`].map((name) => moduleBody(name, read(name), imported))
  const bindings = [...imported].map((name) => {
    const local = bundle.exports.get(name)
    if (!local) throw new Error(`views/mcp-apps imports ${name} from ${EXT_APPS}, which its app-with-deps bundle does not export`)
    return `${name} = ${local}`
  })
  const script = `${bundle.code}\n{\nconst ${bindings.join(', ')}\n${scripts.join('\n')}\n}\n`
  // Nothing in it may end the script element early (the build checks rather than escapes).
  if (/<\/script|<!--/i.test(script)) throw new Error(`the script of the ${file} view contains </script or <!--`)
  return replaceOnce(replaceOnce(page, '<!-- view:style -->', `<style>\n${read('view.css')}</style>`), '<!-- view:script -->', `<script type="module">\n${script}</script>`)
}

function replaceOnce(text: string, marker: string, replacement: string): string {
  const at = text.indexOf(marker)
  if (at < 0 || text.indexOf(marker, at + 1) >= 0) throw new Error(`a view page must hold ${marker} once`)
  return text.slice(0, at) + replacement + text.slice(at + marker.length)
}

/**
 * A view script as part of the one module: `import { … } from '@modelcontextprotocol/ext-apps'`
 * names what the bindings provide (added to `imported`), `import … from './view.js'` is view.js
 * itself, inlined before, and `export` is dropped. Any other import is a mistake.
 */
function moduleBody(name: string, source: string, imported: Set<string>): string {
  return source
    .replace(/^import\s*\{([^}]*)\}\s*from\s*'([^']+)'\s*\n/gm, (_line, names: string, from: string) => {
      if (from === EXT_APPS) for (const n of names.split(',').map((s) => s.trim()).filter(Boolean)) imported.add(n)
      else if (from !== './view.js') throw new Error(`views/mcp-apps/${name} imports from ${from}: views import only ${EXT_APPS} and ./view.js`)
      return ''
    })
    .replace(/^export\s+(?=(async\s+)?function\b|const\b|let\b|class\b)/gm, '')
}

let bundle: { code: string; exports: Map<string, string> } | undefined

/** The ext-apps App bundle with its closing `export { local as name, … }` taken apart. */
function appBundle(): { code: string; exports: Map<string, string> } {
  if (bundle) return bundle
  const code = fs.readFileSync(new URL(import.meta.resolve(`${EXT_APPS}/app-with-deps`)), 'utf8')
  const match = /export\s*\{([^}]*)\}\s*;?\s*$/.exec(code)
  if (!match) throw new Error(`${EXT_APPS}/app-with-deps does not end in an export list`)
  const exports = new Map<string, string>()
  for (const spec of match[1]!.split(',')) {
    const [local, exported = local] = spec.trim().split(/\s+as\s+/)
    if (local) exports.set(exported!, local)
  }
  bundle = { code: code.slice(0, match.index), exports }
  return bundle
}
