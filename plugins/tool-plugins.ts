// Loads the tool plugins — the built-in tools (tools/index.ts) first, then those named by
// GROWTHDESK_PLUGINS and `buildApp({ plugins })` — and then seals the registry: every surface
// (the tools API, MCP, OpenAPI, the agent documents, the CLI) is built from what it holds then.
// Each plugin is an ordinary Fastify plugin, registered in a context of its own where
// `app.operations.add(op)` adds to the registry in its name; a plugin that cannot be loaded,
// throws, or adds a name that exists stops the start with a PluginError of one line.
import module from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { Operation, ToolPlugin } from '../core/operations.ts'

/** A plugin: its module specifier (loaded here), or the plugin function itself. */
export type PluginSource = string | ToolPlugin | FastifyPluginAsync

/** A tool plugin that stopped the start: one line, naming the plugin and the reason. */
export class PluginError extends Error {
  readonly plugin: string
  constructor(plugin: string, reason: string) {
    super(`tool plugin '${plugin}' ${reason}`)
    this.name = 'PluginError'
    this.plugin = plugin
  }
}

/** growthdesk's own entry (index.ts): what a plugin's `import … from 'growthdesk'` reaches. */
const ENTRY = new URL('../index.ts', import.meta.url).href
let entryHook = false

/**
 * A plugin installed beside growthdesk (node_modules/acme-tools) cannot find growthdesk by
 * name: the app is not installed in its own node_modules. This resolve hook (Node's in-thread
 * module hooks) sends the specifier `growthdesk` to this very copy, so a plugin shares its
 * registry types and TypeBox instead of loading another. Registered once, on the first plugin
 * loaded by name.
 */
function resolveGrowthdeskToThisCopy() {
  if (entryHook) return
  entryHook = true
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === 'growthdesk') return { url: ENTRY, shortCircuit: true }
      return nextResolve(specifier, context)
    },
  })
}

/** The URL a specifier names: an absolute path, a path relative to the current directory, or a
 * package resolved from growthdesk's own folder (where `npm install acme-tools` puts it). */
function resolvePlugin(specifier: string): string {
  if (path.isAbsolute(specifier)) return pathToFileURL(specifier).href
  if (specifier.startsWith('./') || specifier.startsWith('../')) return pathToFileURL(path.resolve(specifier)).href
  return import.meta.resolve(specifier)
}

function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const first = message.split('\n').find((line) => line.trim() !== '') ?? 'failed'
  return first.trim()
}

/** Loads a plugin named by a specifier: its module's default export must be a plugin function. */
async function load(specifier: string): Promise<NamedPlugin> {
  let url: string
  try {
    resolveGrowthdeskToThisCopy()
    url = resolvePlugin(specifier)
  } catch (err) {
    throw new PluginError(specifier, `cannot be found (${oneLine(err)}): install it beside growthdesk (npm install ${specifier}) or give an absolute path`)
  }
  let loaded: { default?: unknown }
  try {
    loaded = await import(url)
  } catch (err) {
    throw new PluginError(specifier, `cannot be loaded: ${oneLine(err)}`)
  }
  const plugin = loaded.default
  if (typeof plugin !== 'function') {
    throw new PluginError(specifier, 'has no plugin as its default export: export default async function (app) { app.operations.add(…) }')
  }
  return { name: specifier, plugin: plugin as FastifyPluginAsync }
}

/** A plugin ready to register, with the name its errors give. */
export interface NamedPlugin {
  name: string
  plugin: FastifyPluginAsync
}

/**
 * Every plugin's module loaded (the specifiers imported), before the app opens its database: a
 * plugin that cannot be found or loaded stops the start at once.
 */
export async function loadToolPlugins(sources: readonly PluginSource[]): Promise<NamedPlugin[]> {
  const loaded: NamedPlugin[] = []
  for (const [index, source] of sources.entries()) {
    loaded.push(typeof source === 'string' ? await load(source) : { name: nameOf(source, index), plugin: source as FastifyPluginAsync })
  }
  return loaded
}

/** A plugin function's name for its errors: Fastify's display name, its own name, or its place. */
function nameOf(plugin: Exclude<PluginSource, string>, index: number): string {
  const display = (plugin as unknown as Record<symbol, unknown>)[Symbol.for('fastify.display-name')]
  return typeof display === 'string' ? display : plugin.name || `#${index + 1}`
}

export interface ToolPluginsOptions {
  /** In load order (loadToolPlugins); the built-in tools come first. */
  plugins: NamedPlugin[]
}

async function toolPlugins(app: FastifyInstance, options: ToolPluginsOptions) {
  const { registry } = app
  for (const { name, plugin } of options.plugins) {
    const added: string[] = []
    // A context of the plugin's own: `operations` adds in its name, and anything else it
    // registers (routes, hooks) stays inside it.
    const scoped = async (scope: FastifyInstance) => {
      scope.decorate('operations', {
        add(op: Operation) {
          try {
            registry.add(op)
          } catch (err) {
            throw new PluginError(name, oneLine(err))
          }
          added.push(op.name)
        },
      })
      await scope.register(plugin)
    }
    try {
      await app.register(scoped)
    } catch (err) {
      throw err instanceof PluginError ? err : new PluginError(name, `failed while loading: ${oneLine(err)}`)
    }
    app.log.debug({ plugin: name, operations: added }, 'tool plugin loaded')
  }
  registry.seal()
}

export default fp(toolPlugins, { name: 'tool-plugins', dependencies: ['registry'] })
