-- Interop check: Neovim's built-in LSP client (the 0.7 API: vim.lsp.start_client,
-- buf_attach_client, client.request / request_sync / cancel_request,
-- vim.diagnostic) against the `lsp_server` example, in a headless Neovim.
-- Usage: LSP_SERVER=PATH/TO/lsp_server nvim --headless --clean -c 'luafile interop/neovim_lsp.lua'
-- (interop/neovim.sh does that). Prints one `ok` line per check on stdout and
-- quits with `:cquit 1` at the first failure, after printing the JSON-RPC
-- messages seen so far on stderr.
--
-- Two sessions. Neovim 0.7 knows nothing of LSP 3.17's
-- `general.positionEncodings`: as it comes, it offers none, the server falls
-- back to UTF-16, and so does Neovim (every check). Then a configuration
-- that offers ["utf-8", "utf-16"] and adopts the server's choice in
-- `on_init` (setting `client.offset_encoding`, as 0.7's documentation says
-- to): the server picks UTF-8 and Neovim sends byte columns (the document
-- checks again). The text has an 'é' (2 bytes, 1 UTF-16 unit) and an emoji
-- (4 bytes, 2 UTF-16 units) before every edit, diagnostic and completion, so
-- a server counting in the wrong unit would put them in the wrong place.

local server = os.getenv('LSP_SERVER')
local TIMEOUT = 15000 -- ms, for anything that waits on the server

local passed = 0
local label = ''
local function ok(name)
  passed = passed + 1
  io.stdout:write('ok   ' .. label .. name .. '\n')
  io.stdout:flush()
end

local function expect(cond, fmt, ...)
  if not cond then
    error(string.format(fmt, ...), 2)
  end
end

local function wait_for(what, predicate, ms)
  if not vim.wait(ms or TIMEOUT, predicate, 10) then
    error('timed out after ' .. (ms or TIMEOUT) .. ' ms waiting for ' .. what, 2)
  end
end

-- The JSON-RPC messages on the wire, both ways. Neovim's rpc module encodes
-- and decodes every message with vim.json, looked up at each call; wrapping
-- both functions sees the messages without changing them (used for the
-- cancelled request's error code, which Neovim 0.7 does not hand to the
-- request's handler, and for the trace printed on failure).
local wire = {}
do
  local encode, decode = vim.json.encode, vim.json.decode
  vim.json.encode = function(value, ...)
    local text = encode(value, ...)
    if type(value) == 'table' and value.jsonrpc then
      table.insert(wire, { dir = '-->', msg = value, text = text })
    end
    return text
  end
  vim.json.decode = function(text, ...)
    local value = decode(text, ...)
    if type(value) == 'table' and value.jsonrpc then
      table.insert(wire, { dir = '<--', msg = value, text = text })
    end
    return value
  end
end

local function sent(method)
  local found = {}
  for _, m in ipairs(wire) do
    if m.dir == '-->' and m.msg.method == method then
      table.insert(found, m.msg)
    end
  end
  return found
end

local function answer_to(id)
  for _, m in ipairs(wire) do
    if m.dir == '<--' and m.msg.id == id and m.msg.method == nil then
      return m.msg
    end
  end
end

-- Where things are in each encoding: the TODO of line 0 before and after
-- the edit (which goes right after the emoji, where the TODO was), the
-- TODO of line 2, and the cursor after "alp" on line 2.
local columns = {
  ['utf-16'] = { todo = 15, moved = 31, todo2 = 3, alp = 12 },
  ['utf-8'] = { todo = 19, moved = 35, todo2 = 5, alp = 14 },
}

-- example/slow, on a token from window/workDoneProgress/create: once to
-- the end, once cancelled.
local function slow(client, buf, created, progress)
  local done
  client.request('example/slow', { ms = 200 }, function(err, result) done = { err = err, result = result } end, buf)
  wait_for('example/slow {ms = 200}', function() return done ~= nil end)
  expect(not done.err and done.result.sleptMs == 200, 'example/slow: %s', vim.inspect(done))
  expect(#created == 1, 'window/workDoneProgress/create: %s', vim.inspect(created))
  local kinds = {}
  for _, value in ipairs(progress[created[1]]) do table.insert(kinds, value.kind) end
  expect(#kinds == 11 and kinds[1] == 'begin' and kinds[11] == 'end', 'progress: %s', vim.inspect(progress[created[1]]))
  local previous = -1
  for i = 2, 10 do
    local p = progress[created[1]][i]
    expect(p.kind == 'report' and p.percentage > previous, 'report %d: %s', i - 1, vim.inspect(p))
    previous = p.percentage
  end
  ok('example/slow {ms = 200} -> sleptMs 200; progress on a window/workDoneProgress/create token: begin, 9 reports, end')


  -- Cancelled with client.cancel_request.
  local handled = false
  local sent_ok, id = client.request('example/slow', { ms = 60000 }, function() handled = true end, buf)
  expect(sent_ok, 'example/slow {ms = 60000} was not sent')
  wait_for('a second progress token', function() return #created == 2 end)
  local token = created[2]
  wait_for('progress begin', function() return #progress[token] > 0 end)
  local cancelled_at = vim.loop.hrtime()
  client.cancel_request(id)
  wait_for('the answer to the cancelled request', function() return answer_to(id) ~= nil end, 10000)
  local elapsed = (vim.loop.hrtime() - cancelled_at) / 1e6
  local reply = answer_to(id)
  expect(reply.error and reply.error.code == -32800, 'answer: %s', vim.inspect(reply))
  expect(elapsed < 5000, 'the answer came %d ms after $/cancelRequest', elapsed)
  wait_for('the pending request to be cleared', function() return client.requests[id] == nil end)
  wait_for('progress end', function()
    local last = progress[token][#progress[token]]
    return last.kind == 'end'
  end)
  local last = progress[token][#progress[token]]
  expect(last.message == 'cancelled', 'progress end: %s', vim.inspect(last))
  -- Neovim 0.7 keeps RequestCancelled from the handler (rpc.lua mutes it).
  expect(not handled, 'the handler of the cancelled request was called')
  ok(string.format('example/slow {ms = 60000} cancelled ($/cancelRequest) -> -32800 after %.1f ms, progress end "cancelled"',
    elapsed))
end

-- client.stop() (shutdown, exit) and the server's exit code; `exited`
-- returns what on_exit got.
local function stop(client, logs, exited)
  local warnings = {}
  for _, l in ipairs(logs) do
    if l.type <= 2 then table.insert(warnings, l.message) end
  end
  expect(#warnings == 0, 'the server logged errors or warnings: %s', vim.inspect(warnings))
  client.stop()
  wait_for('the server to exit', function() return exited() ~= nil end)
  expect(#sent('shutdown') == 1 and #sent('exit') == 1, 'shutdown and exit were not both sent')
  expect(exited().code == 0 and exited().signal == 0, 'the server exited with %s', vim.inspect(exited()))
  ok('client.stop() -> shutdown, exit; the server exits with code 0')
end

-- One client session: `offer` is the general.positionEncodings to offer
-- (nil: Neovim's own capabilities), `full` adds example/slow.
local function session(offer, encoding, full)
  label = encoding .. ': '
  local col = columns[encoding]
  wire = {}

  -- What the server sends us, recorded before Neovim's own handlers run.
  local logs, published, progress, created = {}, {}, {}, {}
  local function recording(method, record)
    return function(err, result, ctx, config)
      record(result)
      return vim.lsp.handlers[method](err, result, ctx, config)
    end
  end
  local handlers = {
    ['window/logMessage'] = recording('window/logMessage', function(p) table.insert(logs, p) end),
    ['textDocument/publishDiagnostics'] = recording('textDocument/publishDiagnostics', function(p)
      table.insert(published, p)
    end),
    ['window/workDoneProgress/create'] = recording('window/workDoneProgress/create', function(p)
      table.insert(created, p.token)
      progress[p.token] = {}
    end),
    ['$/progress'] = recording('$/progress', function(p)
      progress[p.token] = progress[p.token] or {}
      table.insert(progress[p.token], p.value)
    end),
  }

  -- Neovim 0.7's defaults, plus workspace.configuration: 0.7 answers
  -- workspace/configuration from `settings` but does not advertise it.
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.workspace.configuration = true
  if offer then
    capabilities.general = { positionEncodings = offer }
  end

  local init_result, exited
  local client_id = vim.lsp.start_client {
    name = 'lsp_server',
    cmd = { server },
    capabilities = capabilities,
    settings = { example = { greeting = 'hello from Neovim' } },
    handlers = handlers,
    on_init = function(client, result)
      init_result = result
      if offer then
        client.offset_encoding = result.capabilities.positionEncoding
      end
    end,
    on_exit = function(code, signal) exited = { code = code, signal = signal } end,
  }
  expect(client_id, 'vim.lsp.start_client failed')
  local client = vim.lsp.get_client_by_id(client_id)

  -- initialize ---------------------------------------------------------------
  wait_for('the initialize answer', function() return init_result ~= nil or exited ~= nil end)
  expect(init_result, 'the server exited before answering initialize: %s', vim.inspect(exited))
  local caps = init_result.capabilities
  expect(caps.hoverProvider == true, 'hoverProvider: %s', vim.inspect(caps.hoverProvider))
  expect(type(caps.completionProvider) == 'table', 'completionProvider: %s', vim.inspect(caps.completionProvider))
  expect(type(caps.textDocumentSync) == 'table' and caps.textDocumentSync.change == 2
    and caps.textDocumentSync.openClose == true, 'textDocumentSync: %s', vim.inspect(caps.textDocumentSync))
  expect(caps.positionEncoding == encoding, 'positionEncoding: %s', vim.inspect(caps.positionEncoding))
  expect(client.offset_encoding == encoding, 'client.offset_encoding: %s', client.offset_encoding)
  expect(client.resolved_capabilities.text_document_did_change == 2, 'Neovim does not sync incrementally')
  ok(string.format('initialize: %s %s, hover, completion, incremental sync, positionEncoding %s (offered: %s)',
    init_result.serverInfo.name, init_result.serverInfo.version, encoding, offer and table.concat(offer, ', ') or 'none'))

  wait_for('window/logMessage after initialized', function() return #logs > 0 end)
  expect(logs[1].message:find('hello from Neovim', 1, true), 'logged: %s', vim.inspect(logs))
  expect(#sent('initialized') == 1, 'initialized was not sent')
  ok(string.format('initialized: workspace/configuration answered from settings, logged "%s"', logs[1].message))

  -- didOpen --------------------------------------------------------------------
  local path = vim.fn.tempname() .. '-notes.txt'
  local uri = vim.uri_from_fname(path)
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(buf, path)
  vim.bo[buf].filetype = 'text'
  -- 'é' is 2 bytes and 1 UTF-16 unit, the emoji 4 bytes and 2 units: the
  -- TODO starts at byte 19, UTF-16 character 15.
  vim.api.nvim_buf_set_lines(buf, 0, -1, true, { 'héllo wörld 🎉 TODO first', 'second line' })
  vim.api.nvim_set_current_buf(buf)
  expect(vim.lsp.buf_attach_client(buf, client_id), 'buf_attach_client failed')

  local function todo_diagnostics(count, version)
    wait_for(string.format('%d diagnostics for version %s', count, version), function()
      local last = published[#published]
      return last and last.version == version and #vim.diagnostic.get(buf) == count
    end)
    local got = vim.diagnostic.get(buf)
    table.sort(got, function(a, b) return a.lnum < b.lnum end)
    for _, d in ipairs(got) do
      local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, true)[1]
      local at = line:find('TODO', 1, true)
      expect(d.message == 'a TODO is left' and d.source == 'lsp_server'
        and d.severity == vim.diagnostic.severity.WARN, 'diagnostic: %s', vim.inspect(d))
      expect(at and d.col == at - 1 and d.end_col == at + 3,
        'diagnostic at byte %d..%d of %q, the TODO is at byte %s', d.col, d.end_col, line, at and at - 1)
    end
    return got, published[#published]
  end

  wait_for('didOpen', function() return #sent('textDocument/didOpen') == 1 end)
  local opened = sent('textDocument/didOpen')[1].params.textDocument
  expect(opened.uri == uri, 'didOpen uri %s, expected %s', opened.uri, uri)
  local _, first = todo_diagnostics(1, 0)
  local start = first.diagnostics[1].range.start
  expect(start.line == 0 and start.character == col.todo, 'TODO published at %s, expected 0:%d', vim.inspect(start), col.todo)
  ok(string.format('didOpen -> publishDiagnostics: 1 Warning "a TODO is left" at 0:%d, Neovim shows it on byte 19 (the TODO)',
    col.todo))

  local function hover()
    local answer = client.request_sync('textDocument/hover', vim.lsp.util.make_position_params(0, client.offset_encoding),
      TIMEOUT, buf)
    expect(answer and not answer.err, 'hover failed: %s', vim.inspect(answer))
    local contents = answer.result.contents
    expect(contents.kind == 'plaintext', 'hover contents: %s', vim.inspect(contents))
    return contents.value
  end
  expect(hover() == '7 words', 'hover before the edit: %s', hover())

  -- Incremental didChange right after the emoji ---------------------------------
  local line0 = vim.api.nvim_buf_get_lines(buf, 0, 1, true)[1]
  local after_emoji = select(2, line0:find('🎉 ', 1, true)) -- byte column, 0-based
  vim.api.nvim_buf_set_text(buf, 0, after_emoji, 0, after_emoji, { 'alphabet alpine ' })
  expect(hover() == '9 words', 'hover after the edit: %s', hover())
  local changes = sent('textDocument/didChange')
  expect(#changes == 1, '%d didChange sent', #changes)
  local change = changes[1].params.contentChanges
  expect(#change == 1 and change[1].range and change[1].text == 'alphabet alpine ', 'didChange: %s', vim.inspect(change))
  local range = change[1].range
  expect(range.start.line == 0 and range.start.character == col.todo and range['end'].line == 0
    and range['end'].character == col.todo, 'didChange range %s, expected 0:%d..0:%d', vim.inspect(range), col.todo, col.todo)
  ok(string.format('nvim_buf_set_text after the emoji -> incremental didChange at 0:%d, then hover -> "9 words"', col.todo))

  local _, moved = todo_diagnostics(1, changes[1].params.textDocument.version)
  start = moved.diagnostics[1].range.start
  expect(start.line == 0 and start.character == col.moved, 'TODO published at %s, expected 0:%d', vim.inspect(start), col.moved)
  ok(string.format('diagnostics follow the edit: the TODO now at 0:%d, byte 35', col.moved))

  -- A second TODO, and a prefix to complete -------------------------------------
  vim.api.nvim_buf_set_lines(buf, -1, -1, true, { '🎉 TODO: alp here' })
  local version = vim.lsp.util.buf_versions[buf]
  wait_for('the second didChange', function() return #sent('textDocument/didChange') == 2 end)
  local todos = todo_diagnostics(2, version)
  expect(todos[2].lnum == 2 and todos[2].col == 5, 'second TODO shown at %d:%d', todos[2].lnum, todos[2].col)
  local second = published[#published].diagnostics[2].range.start
  expect(second.line == 2 and second.character == col.todo2, 'second TODO published at %s', vim.inspect(second))
  ok(string.format('nvim_buf_set_lines adding a second TODO -> 2 diagnostics for version %d, lines 0 and 2', version))

  -- The cursor on the space after "alp": byte 14 of line 2.
  local line2 = vim.api.nvim_buf_get_lines(buf, 2, 3, true)[1]
  vim.api.nvim_win_set_cursor(0, { 3, select(2, line2:find('alp', 1, true)) })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  expect(params.position.line == 2 and params.position.character == col.alp, 'position %s', vim.inspect(params.position))
  local answer = client.request_sync('textDocument/completion', params, TIMEOUT, buf)
  expect(answer and not answer.err, 'completion failed: %s', vim.inspect(answer))
  local items = answer.result.items or answer.result
  local labels = {}
  for _, item in ipairs(items) do
    expect(item.kind == vim.lsp.protocol.CompletionItemKind.Text, 'item kind: %s', vim.inspect(item))
    table.insert(labels, item.label)
  end
  table.sort(labels)
  expect(vim.deep_equal(labels, { 'alphabet', 'alpine' }), 'completion labels: %s', vim.inspect(labels))
  ok(string.format('completion after "🎉 TODO: alp" (2:%d) -> alphabet, alpine (kind Text)', col.alp))
  expect(hover() == '13 words', 'hover after the second edit: %s', hover())
  ok('hover after the second edit -> "13 words"')

  if full then
    slow(client, buf, created, progress)
  end
  stop(client, logs, function() return exited end)
end

local function main()
  expect(server and server ~= '', 'set LSP_SERVER to the lsp_server binary')
  expect(vim.fn.executable(server) == 1, '%s is not executable', server)
  session(nil, 'utf-16', true)
  session({ 'utf-8', 'utf-16' }, 'utf-8', false)
end

local success, err = xpcall(main, debug.traceback)
if success then
  io.stdout:write(string.format('Neovim %s interop: %d checks passed\n', tostring(vim.version().major) .. '.'
    .. vim.version().minor .. '.' .. vim.version().patch, passed))
  io.stdout:flush()
  vim.cmd('qall!')
else
  io.stderr:write('FAIL ' .. tostring(err) .. '\n\nJSON-RPC messages so far:\n')
  for _, m in ipairs(wire) do
    io.stderr:write(m.dir .. ' ' .. m.text .. '\n')
  end
  io.stderr:flush()
  vim.cmd('cquit 1')
end
