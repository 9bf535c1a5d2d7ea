// A headless stand-in for the `vscode` module, with just what
// vscode-languageclient's node client uses to start a server, sync text
// documents, ask for hovers and completions, show diagnostics and progress,
// and stop. lsp_languageclient.mjs makes `require('vscode')` resolve here;
// nothing else uses it. The client's own code (its features, converters and
// protocol layer) runs unchanged: this file only plays the editor, and
// `editor` (below) lets the check open and edit documents, call the
// providers the client registered, and see what the client showed.
//
// An API the client reaches for that is missing here fails loudly: every
// namespace is a Proxy that throws on an unknown name.
'use strict';

const strict = (name, target) => new Proxy(target, {
  get(object, key) {
    if (key in object || typeof key === 'symbol' || ['then', 'toJSON', '__esModule'].includes(key)) return object[key];
    throw new Error(`vscode stub: ${name}.${String(key)} is not implemented`);
  },
});

// --- events, disposables, cancellation ---------------------------------------

class Disposable {
  constructor(onDispose) { this._onDispose = onDispose; }
  static from(...items) { return new Disposable(() => items.forEach((d) => d && d.dispose())); }
  dispose() { if (this._onDispose) { const f = this._onDispose; this._onDispose = undefined; f(); } }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set();
    this.event = (listener, thisArgs, disposables) => {
      const entry = { listener, thisArgs };
      this._listeners.add(entry);
      const d = new Disposable(() => this._listeners.delete(entry));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(data) {
    const results = [];
    for (const { listener, thisArgs } of [...this._listeners]) results.push(listener.call(thisArgs, data));
    return results;
  }
  dispose() { this._listeners.clear(); }
}

class CancellationError extends Error {
  constructor() { super('Canceled'); this.name = 'Canceled'; }
}

class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this._emitter = emitter;
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
  }
  cancel() {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this._emitter.fire(undefined);
    }
  }
  dispose() { this._emitter.dispose(); }
}

// --- values -----------------------------------------------------------------------

class Uri {
  constructor(scheme, authority, path, query, fragment) {
    Object.assign(this, { scheme, authority, path, query, fragment });
  }
  static parse(value) {
    const url = new URL(value);
    return new Uri(url.protocol.slice(0, -1), url.host, decodeURIComponent(url.pathname),
      url.search.slice(1), url.hash.slice(1));
  }
  static file(path) { return new Uri('file', '', path, '', ''); }
  static joinPath(base, ...segments) { return base.with({ path: [base.path, ...segments].join('/') }); }
  get fsPath() { return this.path; }
  with(change) {
    return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority, change.path ?? this.path,
      change.query ?? this.query, change.fragment ?? this.fragment);
  }
  toString() {
    const path = this.path.split('/').map(encodeURIComponent).join('/');
    return `${this.scheme}://${this.authority}${path}${this.query ? `?${this.query}` : ''}${this.fragment ? `#${this.fragment}` : ''}`;
  }
  toJSON() { return this.toString(); }
}

class Position {
  constructor(line, character) { this.line = line; this.character = character; }
  isBefore(other) { return this.compareTo(other) < 0; }
  isBeforeOrEqual(other) { return this.compareTo(other) <= 0; }
  isAfter(other) { return this.compareTo(other) > 0; }
  isAfterOrEqual(other) { return this.compareTo(other) >= 0; }
  isEqual(other) { return this.compareTo(other) === 0; }
  compareTo(other) { return this.line - other.line || this.character - other.character; }
  translate(lineDelta = 0, characterDelta = 0) { return new Position(this.line + lineDelta, this.character + characterDelta); }
  with(line = this.line, character = this.character) { return new Position(line, character); }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === 'number') { this.start = new Position(a, b); this.end = new Position(c, d); }
    else { [this.start, this.end] = a.isBefore(b) ? [a, b] : [b, a]; }
  }
  get isEmpty() { return this.start.isEqual(this.end); }
  get isSingleLine() { return this.start.line === this.end.line; }
  contains(p) {
    if (p instanceof Range) return this.contains(p.start) && this.contains(p.end);
    return this.start.isBeforeOrEqual(p) && p.isBeforeOrEqual(this.end);
  }
  isEqual(other) { return this.start.isEqual(other.start) && this.end.isEqual(other.end); }
  with(start = this.start, end = this.end) { return new Range(start, end); }
}

class Location { constructor(uri, range) { this.uri = uri; this.range = range instanceof Position ? new Range(range, range) : range; } }
class MarkdownString {
  constructor(value = '', supportThemeIcons = false) { this.value = value; this.supportThemeIcons = supportThemeIcons; }
  appendText(text) { this.value += text; return this; }
  appendMarkdown(text) { this.value += text; return this; }
  appendCodeblock(code, language = '') { this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`; return this; }
}
class Hover { constructor(contents, range) { this.contents = Array.isArray(contents) ? contents : [contents]; this.range = range; } }
class CompletionItem { constructor(label, kind) { this.label = label; this.kind = kind; } }
class CompletionList { constructor(items = [], isIncomplete = false) { this.items = items; this.isIncomplete = isIncomplete; } }
class SnippetString { constructor(value = '') { this.value = value; } }
class TextEdit {
  constructor(range, newText) { this.range = range; this.newText = newText; }
  static replace(range, newText) { return new TextEdit(range, newText); }
  static insert(position, newText) { return new TextEdit(new Range(position, position), newText); }
  static delete(range) { return new TextEdit(range, ''); }
}
class Diagnostic { constructor(range, message, severity = 0) { this.range = range; this.message = message; this.severity = severity; } }
class DiagnosticRelatedInformation { constructor(location, message) { this.location = location; this.message = message; } }
// Subclassed by the client when its modules load; never built here.
class CodeLens { constructor(range, command) { this.range = range; this.command = command; } }
class CodeAction { constructor(title, kind) { this.title = title; this.kind = kind; } }
class DocumentLink { constructor(range, target) { this.range = range; this.target = target; } }
class InlayHint { constructor(position, label, kind) { Object.assign(this, { position, label, kind }); } }
class SymbolInformation { constructor(name, kind, containerName, location) { Object.assign(this, { name, kind, containerName, location }); } }
class CallHierarchyItem { constructor(kind, name, detail, uri, range, selectionRange) { Object.assign(this, { kind, name, detail, uri, range, selectionRange }); } }
class TypeHierarchyItem { constructor(kind, name, detail, uri, range, selectionRange) { Object.assign(this, { kind, name, detail, uri, range, selectionRange }); } }
class CodeActionKind {
  constructor(value) { this.value = value; }
  append(part) { return new CodeActionKind(this.value ? `${this.value}.${part}` : part); }
  contains(other) { return this.value === '' || other.value === this.value || other.value.startsWith(`${this.value}.`); }
  intersects(other) { return this.contains(other) || other.contains(this); }
}
for (const [name, value] of Object.entries({ Empty: '', QuickFix: 'quickfix', Refactor: 'refactor',
  RefactorExtract: 'refactor.extract', RefactorInline: 'refactor.inline', RefactorMove: 'refactor.move',
  RefactorRewrite: 'refactor.rewrite', Source: 'source', SourceOrganizeImports: 'source.organizeImports',
  SourceFixAll: 'source.fixAll', Notebook: 'notebook' })) {
  CodeActionKind[name] = new CodeActionKind(value);
}
class TabInputText {}
class TabInputTextDiff {}
class TabInputCustom {}
class TabInputNotebook {}
class RelativePattern { constructor(base, pattern) { this.baseUri = typeof base === 'string' ? Uri.file(base) : base.uri ?? base; this.base = this.baseUri.fsPath; this.pattern = pattern; } }

const enumOf = (...names) => Object.fromEntries(names.map((n, i) => [n, i]));
// CompletionItemKind: VS Code counts from 0 (Text = 0), LSP from 1.
const CompletionItemKind = enumOf('Text', 'Method', 'Function', 'Constructor', 'Field', 'Variable', 'Class',
  'Interface', 'Module', 'Property', 'Unit', 'Value', 'Enum', 'Keyword', 'Snippet', 'Color', 'File', 'Reference',
  'Folder', 'EnumMember', 'Constant', 'Struct', 'Event', 'Operator', 'TypeParameter', 'User', 'Issue');
const SymbolKind = enumOf('File', 'Module', 'Namespace', 'Package', 'Class', 'Method', 'Property', 'Field',
  'Constructor', 'Enum', 'Interface', 'Function', 'Variable', 'Constant', 'String', 'Number', 'Boolean', 'Array',
  'Object', 'Key', 'Null', 'EnumMember', 'Struct', 'Event', 'Operator', 'TypeParameter');

// --- text documents ------------------------------------------------------------------

// UTF-16 offsets, as JavaScript strings (and VS Code) count.
class TextDocument {
  constructor(uri, languageId, text) {
    Object.assign(this, { uri, languageId, version: 1, isDirty: false, isClosed: false, isUntitled: false, eol: 1 });
    this._text = text;
    this.fileName = uri.fsPath;
  }
  get lineCount() { return this._lines().length; }
  _lines() { return this._text.split('\n'); }
  getText(range) {
    return range ? this._text.slice(this.offsetAt(range.start), this.offsetAt(range.end)) : this._text;
  }
  offsetAt(position) {
    const lines = this._lines();
    let offset = 0;
    for (let i = 0; i < position.line && i < lines.length; i++) offset += lines[i].length + 1;
    return offset + Math.min(position.character, (lines[position.line] ?? '').length);
  }
  positionAt(offset) {
    const before = this._text.slice(0, offset).split('\n');
    return new Position(before.length - 1, before.at(-1).length);
  }
  lineAt(lineOrPosition) {
    const line = typeof lineOrPosition === 'number' ? lineOrPosition : lineOrPosition.line;
    const text = this._lines()[line];
    return { lineNumber: line, text, range: new Range(line, 0, line, text.length), isEmptyOrWhitespace: !text.trim() };
  }
  getWordRangeAtPosition(position) {
    const text = this.lineAt(position.line).text;
    let start = position.character;
    let end = position.character;
    while (start > 0 && /\w/.test(text[start - 1])) start--;
    while (end < text.length && /\w/.test(text[end])) end++;
    return start === end ? undefined : new Range(position.line, start, position.line, end);
  }
  validateRange(range) { return range; }
  validatePosition(position) { return position; }
}

// --- namespaces ---------------------------------------------------------------------

const events = {
  openDocument: new EventEmitter(),
  closeDocument: new EventEmitter(),
  changeDocument: new EventEmitter(),
};
const textDocuments = [];
const providers = {}; // kind -> [{ selector, provider }]
const diagnosticCollections = [];
const messages = []; // window.show*Message
const output = []; // output channel lines: { channel, line }
const progress = []; // window.withProgress: { options, reports: [] }

const register = (kind) => (selector, provider, ...rest) => {
  const entry = { selector, provider, rest };
  (providers[kind] ??= []).push(entry);
  return new Disposable(() => providers[kind].splice(providers[kind].indexOf(entry), 1));
};

function match(selector, document) {
  const filters = Array.isArray(selector) ? selector : [selector];
  let score = 0;
  for (const f of filters) {
    if (typeof f === 'string') {
      if (f === document.languageId || f === '*') score = Math.max(score, 10);
      continue;
    }
    if (f.language && f.language !== '*' && f.language !== document.languageId) continue;
    if (f.scheme && f.scheme !== '*' && f.scheme !== document.uri.scheme) continue;
    if (f.notebookType) continue;
    if (f.pattern) {
      const glob = typeof f.pattern === 'string' ? f.pattern : f.pattern.pattern;
      const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/?/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\u0000/g, '.*')}$`);
      if (!re.test(document.uri.fsPath) && !re.test(document.uri.path.split('/').pop())) continue;
    }
    score = Math.max(score, 10);
  }
  return score;
}

const languageProviderNames = ['CompletionItem', 'Hover', 'SignatureHelp', 'Definition', 'References',
  'DocumentHighlight', 'DocumentSymbol', 'WorkspaceSymbol', 'CodeActions', 'CodeLens', 'DocumentFormattingEdit',
  'DocumentRangeFormattingEdit', 'OnTypeFormattingEdit', 'Rename', 'DocumentLink', 'Color', 'FoldingRange',
  'Declaration', 'SelectionRange', 'CallHierarchy', 'TypeHierarchy', 'Implementation', 'TypeDefinition',
  'DocumentSemanticTokens', 'DocumentRangeSemanticTokens', 'LinkedEditingRange', 'InlayHints', 'InlineValues',
  'InlineCompletionItem', 'EvaluatableExpression'];

const languages = strict('languages', {
  match,
  createDiagnosticCollection(name) {
    const entries = new Map();
    const collection = {
      name,
      set(uri, diagnostics) {
        if (Array.isArray(uri)) { for (const [u, d] of uri) collection.set(u, d); return; }
        if (diagnostics === undefined) entries.delete(uri.toString()); else entries.set(uri.toString(), diagnostics);
        editor.onDiagnostics.fire({ uri, diagnostics });
      },
      delete(uri) { entries.delete(uri.toString()); },
      clear() { entries.clear(); },
      get(uri) { return entries.get(uri.toString()); },
      has(uri) { return entries.has(uri.toString()); },
      forEach(callback) { for (const [uri, d] of entries) callback(Uri.parse(uri), d, collection); },
      dispose() { entries.clear(); diagnosticCollections.splice(diagnosticCollections.indexOf(collection), 1); },
    };
    diagnosticCollections.push(collection);
    return collection;
  },
  onDidChangeDiagnostics: new EventEmitter().event,
  getDiagnostics() { return []; },
  ...Object.fromEntries(languageProviderNames.map((n) => [`register${n}Provider`, register(n)])),
});

const configuration = {}; // section -> value, what workspace.getConfiguration answers
function getConfiguration(section) {
  const root = section ? section.split('.').reduce((o, k) => o?.[k], configuration) : configuration;
  return {
    get(key, defaultValue) {
      const value = key.split('.').reduce((o, k) => o?.[k], root);
      return value === undefined ? defaultValue : value;
    },
    has(key) { return key.split('.').reduce((o, k) => o?.[k], root) !== undefined; },
    inspect() { return undefined; },
    update() { return Promise.resolve(); },
    ...(root && typeof root === 'object' ? root : {}),
  };
}

const workspace = strict('workspace', {
  workspaceFolders: undefined,
  name: undefined,
  textDocuments,
  notebookDocuments: [],
  getConfiguration,
  getWorkspaceFolder() { return undefined; },
  onDidOpenTextDocument: events.openDocument.event,
  onDidCloseTextDocument: events.closeDocument.event,
  onDidChangeTextDocument: events.changeDocument.event,
  onDidSaveTextDocument: new EventEmitter().event,
  onWillSaveTextDocument: new EventEmitter().event,
  onDidChangeConfiguration: new EventEmitter().event,
  onDidChangeWorkspaceFolders: new EventEmitter().event,
  onDidOpenNotebookDocument: new EventEmitter().event,
  onDidCloseNotebookDocument: new EventEmitter().event,
  onDidChangeNotebookDocument: new EventEmitter().event,
  onDidSaveNotebookDocument: new EventEmitter().event,
  onDidCreateFiles: new EventEmitter().event,
  onDidRenameFiles: new EventEmitter().event,
  onDidDeleteFiles: new EventEmitter().event,
  onWillCreateFiles: new EventEmitter().event,
  onWillRenameFiles: new EventEmitter().event,
  onWillDeleteFiles: new EventEmitter().event,
  createFileSystemWatcher() {
    const e = () => new EventEmitter().event;
    return { onDidCreate: e(), onDidChange: e(), onDidDelete: e(), dispose() {} };
  },
  applyEdit() { return Promise.resolve(false); },
  registerTextDocumentContentProvider() { return new Disposable(); },
});

function outputChannel(name) {
  const push = (line) => {
    output.push({ channel: name, line });
    editor.echo(name, line);
  };
  const line = (level) => (message, ...args) => push(`[${level}] ${message}${args.length ? ` ${args.join(' ')}` : ''}`);
  let buffer = '';
  return {
    name,
    logLevel: LogLevel.Info,
    onDidChangeLogLevel: new EventEmitter().event,
    trace: line('trace'), debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error'),
    append(text) { buffer += text; },
    appendLine(text) { push(buffer + text); buffer = ''; },
    replace(text) { buffer = text; },
    clear() {}, show() {}, hide() {}, dispose() {},
  };
}

const showMessage = (severity) => (message, ...items) => {
  messages.push({ severity, message });
  return Promise.resolve(undefined);
};

const window = strict('window', {
  activeTextEditor: undefined,
  visibleTextEditors: [],
  tabGroups: { all: [], onDidChangeTabs: new EventEmitter().event, onDidChangeTabGroups: new EventEmitter().event },
  onDidChangeVisibleTextEditors: new EventEmitter().event,
  onDidChangeActiveTextEditor: new EventEmitter().event,
  createOutputChannel: outputChannel,
  showErrorMessage: showMessage('error'),
  showWarningMessage: showMessage('warning'),
  showInformationMessage: showMessage('information'),
  showTextDocument() { return Promise.resolve(undefined); },
  withProgress(options, task) {
    const entry = { options, reports: [] };
    progress.push(entry);
    const source = new CancellationTokenSource();
    entry.cancel = () => source.cancel();
    return Promise.resolve(task({ report: (value) => entry.reports.push(value) }, source.token))
      .finally(() => { entry.done = true; });
  },
});

const LogLevel = { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 };

const vscode = strict('vscode', {
  version: '1.106.0',
  env: strict('env', {
    appName: 'vscode stub (headless)', appRoot: '', language: 'en', machineId: 'stub', sessionId: 'stub',
    uiKind: 1, uriScheme: 'vscode', openExternal() { return Promise.resolve(false); },
  }),
  commands: strict('commands', {
    registerCommand() { return new Disposable(); },
    executeCommand() { return Promise.resolve(undefined); },
    getCommands() { return Promise.resolve([]); },
  }),
  extensions: strict('extensions', { getExtension() { return undefined; }, all: [] }),
  languages,
  workspace,
  window,
  Disposable, EventEmitter, CancellationTokenSource, CancellationError,
  Uri, Position, Range, Location, MarkdownString, Hover, CompletionItem, CompletionList, SnippetString, TextEdit,
  Diagnostic, DiagnosticRelatedInformation, RelativePattern,
  CodeLens, CodeAction, CodeActionKind, DocumentLink, InlayHint, SymbolInformation, CallHierarchyItem, TypeHierarchyItem,
  TabInputText, TabInputTextDiff, TabInputCustom, TabInputNotebook,
  CompletionItemKind, SymbolKind, LogLevel,
  CompletionItemTag: { Deprecated: 1 },
  CompletionTriggerKind: { Invoke: 0, TriggerCharacter: 1, TriggerForIncompleteCompletions: 2 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  DiagnosticTag: { Unnecessary: 1, Deprecated: 2 },
  SymbolTag: { Deprecated: 1 },
  SignatureHelpTriggerKind: { Invoke: 1, TriggerCharacter: 2, ContentChange: 3 },
  CodeActionTriggerKind: { Invoke: 1, Automatic: 2 },
  InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
  TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  EndOfLine: { LF: 1, CRLF: 2 },
  FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
  UIKind: { Desktop: 1, Web: 2 },
});

// --- what the check drives ---------------------------------------------------------------

const editor = {
  providers, diagnosticCollections, messages, output, progress,
  configuration,
  onDiagnostics: new EventEmitter(),
  /** Called with each line written to an output channel; the check sets it. */
  echo(_channel, _line) {},
  /** Opens a document, as an editor does: workspace.onDidOpenTextDocument fires. */
  open(uri, languageId, text) {
    const document = new TextDocument(Uri.parse(uri), languageId, text);
    textDocuments.push(document);
    events.openDocument.fire(document);
    return document;
  },
  /**
   * Applies edits ({ range, text }, in order, each against the text the
   * previous ones left) as one change: the version goes up by one and
   * workspace.onDidChangeTextDocument fires with the content changes.
   * Returns what the listeners returned (the client's promises).
   */
  edit(document, edits) {
    const contentChanges = edits.map(({ range, text }) => {
      const rangeOffset = document.offsetAt(range.start);
      const rangeLength = document.offsetAt(range.end) - rangeOffset;
      document._text = document._text.slice(0, rangeOffset) + text + document._text.slice(rangeOffset + rangeLength);
      return { range, rangeOffset, rangeLength, text };
    });
    document.version += 1;
    return Promise.all(events.changeDocument.fire({ document, contentChanges, reason: undefined }));
  },
  /** Closes a document: workspace.onDidCloseTextDocument fires. Returns the listeners' promises. */
  close(document) {
    textDocuments.splice(textDocuments.indexOf(document), 1);
    document.isClosed = true;
    return Promise.all(events.closeDocument.fire(document));
  },
  /** The provider the client registered for `kind` ('Hover', 'CompletionItem', ...) matching the document. */
  provider(kind, document) {
    const found = (providers[kind] ?? []).find((p) => match(p.selector, document) > 0);
    if (!found) throw new Error(`no ${kind} provider registered for ${document.uri}`);
    return found.provider;
  },
  TextDocument,
};

module.exports = vscode;
module.exports.__editor = editor;
