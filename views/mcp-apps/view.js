// Shared by the MCP App views: the connection to the host (the ext-apps App class), its theme,
// and reading tool results. routes/mcp-apps.ts inlines this file before the view's own script
// in one module, with the ext-apps bundle (app-with-deps) before both: the imports below are
// resolved there, not by a browser.
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables } from '@modelcontextprotocol/ext-apps'

/** The tallest a view draws itself inline (hosts size the frame to the content). */
export const MAX_HEIGHT = 500

/**
 * Connects a view to its host. The handlers are set before `connect`, because the host sends the
 * tool input and result as soon as the view says it is initialized. `onContext` gets the whole
 * host context each time a part of it changes; the theme, style variables and fonts are applied
 * here first.
 */
export async function connectView(name, { onInput, onResult, onCancelled, onContext }) {
  const app = new App({ name: `growthdesk ${name}`, version: '1.0.0' }, { availableDisplayModes: ['inline'] })
  let context = {}
  const apply = (changed) => {
    context = { ...context, ...changed }
    if (changed.theme) applyDocumentTheme(changed.theme)
    if (changed.styles?.variables) applyHostStyleVariables(changed.styles.variables)
    if (changed.styles?.css?.fonts) applyHostFonts(changed.styles.css.fonts)
    onContext?.(context)
  }
  app.ontoolinput = (params) => onInput?.(params.arguments ?? {})
  app.ontoolresult = (result) => onResult?.(result)
  app.ontoolcancelled = (params) => onCancelled?.(params.reason)
  app.onhostcontextchanged = apply
  app.onteardown = async () => ({})
  await app.connect()
  apply(app.getHostContext() ?? {})
  return { app, context: () => context }
}

/**
 * A tool result as data: `{ data }` (its structuredContent, or the JSON of its text when a host
 * passed only the text), or `{ error }`, the message a person reads (growthdesk's error object
 * is the text of a failed call).
 */
export function readResult(result) {
  const text = result?.content?.find((c) => c.type === 'text')?.text
  if (result?.isError) {
    try {
      const body = JSON.parse(text)
      return { error: body?.error?.message ?? text ?? 'The call failed.' }
    } catch {
      return { error: text || 'The call failed.' }
    }
  }
  if (result?.structuredContent && typeof result.structuredContent === 'object') return { data: result.structuredContent }
  try {
    return { data: JSON.parse(text) }
  } catch {
    return { error: 'The result carried no data this view can show.' }
  }
}

/** Calls a tool of this server through the host; a refusal (of the host or the server) as `{ error }`. */
export async function callTool(app, name, args) {
  try {
    return readResult(await app.callServerTool({ name, arguments: args }))
  } catch (err) {
    return { error: err?.message || String(err) }
  }
}

/** An element with attributes (`text` sets its text, `on…` a listener) and children. */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'text') node.textContent = value
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat()) if (child !== undefined && child !== null && child !== false) node.append(child)
  return node
}

/** Shows a message in a live status line: `kind` '' (progress), 'done' or 'error'. */
export function say(node, message, kind = '') {
  node.textContent = message
  node.className = `status${kind ? ` ${kind}` : ''}`
}

/** How tall the view is drawn now. */
export function drawnHeight() {
  return Math.ceil(document.body.getBoundingClientRect().height)
}

/** The height a view must stay within: 500 px, or less where the host's container says so. */
export function heightLimit(context) {
  const box = context.containerDimensions ?? {}
  const cap = typeof box.height === 'number' ? box.height : typeof box.maxHeight === 'number' ? box.maxHeight : MAX_HEIGHT
  return Math.min(MAX_HEIGHT, cap)
}
