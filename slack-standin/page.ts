/**
 * The stand-in's web page: the channel as Slack would show it (parent messages with live status,
 * threads, uploaded images, working buttons, modals) and a box to type `/gpu ...`. Plain DOM code,
 * no build step; every text the app sent is escaped before it is formatted.
 */
export function renderPage(): string {
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>#general · GPU Cloud (local Slack stand-in)</title>
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%23007a5a'/%3E%3C/svg%3E">
<style>
  :root { --border: #ddd; --muted: #616061; --accent: #1264a3; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.46 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d1c1d; display: flex; flex-direction: column; height: 100vh; }
  header { padding: 10px 20px; border-bottom: 1px solid var(--border); display: flex; align-items: baseline; gap: 12px; }
  header h1 { font-size: 18px; margin: 0; }
  .tab { background: none; border: none; border-bottom: 3px solid transparent; font: inherit; font-weight: 700; font-size: 16px; padding: 4px 10px; cursor: pointer; }
  .tab.active { border-bottom-color: var(--accent); }
  #home { flex: 1; overflow-y: auto; padding: 12px 24px; max-width: 760px; }
  #home[hidden], #main[hidden], footer[hidden], #steps[hidden] { display: none; }
  #steps { flex: 1; overflow-y: auto; padding: 12px 24px; max-width: 760px; }
  #steps label { display: block; font-weight: 700; margin-top: 12px; }
  #steps select, #steps textarea, #steps input { width: 100%; padding: 6px 8px; margin-top: 4px; border: 1px solid #bbb; border-radius: 4px; font: inherit; box-sizing: border-box; }
  #steps textarea { min-height: 60px; }
  .step-run { border: 1px solid var(--border); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
  .step-run dt { font-weight: 700; margin-top: 4px; }
  .step-run dd { margin: 0 0 4px; white-space: pre-wrap; word-break: break-word; }
  .step-error { color: #e01e5a; }
  header span { color: var(--muted); font-size: 13px; }
  #main { flex: 1; display: flex; min-height: 0; }
  #feed { flex: 1; overflow-y: auto; padding: 12px 20px; }
  #pane { width: min(420px, 45vw); border-left: 1px solid var(--border); display: flex; flex-direction: column; }
  #pane[hidden] { display: none; }
  .pane-head { padding: 10px 16px; border-bottom: 1px solid var(--border); display: flex; justify-content: space-between; align-items: center; }
  #pane-body { flex: 1; overflow-y: auto; padding: 8px 16px; }
  .replies-link { background: none; border: none; color: var(--accent); font-weight: 700; font-size: 13px; padding: 2px 0; cursor: pointer; }
  .replies-link:hover { text-decoration: underline; }
  .assistant-status { color: var(--muted); font-style: italic; font-size: 13px; margin: 4px 0; }
  .prompts { display: flex; flex-wrap: wrap; gap: 6px; margin: 8px 0; }
  .session { display: flex; align-items: center; gap: 8px; font-size: 13px; color: var(--muted); margin: 4px 0; }
  .session .stop { border: 1px solid #c00; color: #c00; background: none; border-radius: 4px; padding: 1px 8px; cursor: pointer; }
  .pane-replies { border-top: 1px solid #eee; margin-top: 6px; padding-top: 6px; }
  #confirm-backdrop { position: fixed; inset: 0; background: rgba(0,0,0,.45); display: none; align-items: center; justify-content: center; }
  #confirm { background: #fff; border-radius: 8px; width: min(440px, 94vw); padding: 18px 22px; }
  #confirm h3 { margin: 0 0 8px; }
  .message { padding: 6px 0; border-bottom: 1px solid #f3f3f3; }
  .meta { font-size: 13px; color: var(--muted); }
  .meta b { color: #1d1c1d; font-size: 15px; }
  .app-badge { background: #e8e8e8; border-radius: 3px; font-size: 10px; padding: 1px 4px; margin-left: 4px; }
  .ephemeral { background: #f8f8ff; border-left: 3px solid #9b9bd4; padding: 6px 10px; margin: 6px 0; }
  .ephemeral .meta { font-style: italic; }
  .block { margin: 4px 0; }
  .context { color: var(--muted); font-size: 13px; }
  .header-block { font-weight: 700; font-size: 17px; }
  pre { background: #f8f8f8; border: 1px solid #e4e4e4; border-radius: 4px; padding: 8px; white-space: pre-wrap; word-break: break-word; margin: 4px 0; font-size: 13px; }
  code { background: #f4f4f4; border: 1px solid #e4e4e4; border-radius: 3px; padding: 0 3px; font-size: 13px; color: #c01343; }
  blockquote { border-left: 4px solid #ddd; margin: 4px 0; padding-left: 8px; }
  .mention { background: #e8f5fa; color: var(--accent); border-radius: 3px; padding: 0 2px; }
  button.slack-button { border: 1px solid #bbb; background: #fff; border-radius: 4px; padding: 4px 12px; margin: 4px 6px 0 0; font-weight: 600; cursor: pointer; }
  button.slack-button.primary { background: #007a5a; color: #fff; border-color: #007a5a; }
  button.slack-button.danger { color: #e01e5a; border-color: #e01e5a; }
  .thread .message { border-bottom: none; }
  .thread-reply { display: flex; gap: 6px; margin-top: 4px; }
  .thread-reply input { flex: 1; padding: 4px 8px; border: 1px solid var(--border); border-radius: 4px; }
  .file { margin: 4px 0; }
  .file img { max-width: 360px; max-height: 360px; border-radius: 6px; border: 1px solid var(--border); display: block; }
  .streaming::after { content: " ▍"; color: var(--muted); }
  .tasks { list-style: none; margin: 4px 0; padding: 6px 10px; border: 1px solid var(--border); border-radius: 6px; }
  .tasks .plan-title { font-weight: 700; margin-bottom: 4px; }
  .task .task-detail { color: var(--muted); font-size: 13px; margin-left: 22px; }
  footer { border-top: 1px solid var(--border); padding: 10px 20px; }
  #composer-form { display: flex; gap: 6px; align-items: center; }
  #composer-form .slack-button { margin: 0; }
  .menu { position: fixed; background: #fff; border: 1px solid #bbb; border-radius: 6px; box-shadow: 0 4px 12px rgba(0,0,0,.15); padding: 4px 0; z-index: 10; }
  .menu button { display: block; width: 100%; text-align: left; background: none; border: none; padding: 6px 16px; font: inherit; cursor: pointer; }
  .menu button:hover { background: var(--accent); color: #fff; }
  .more-actions { float: right; background: none; border: 1px solid transparent; border-radius: 4px; cursor: pointer; color: var(--muted); }
  .message:hover .more-actions { border-color: #ddd; }
  #composer { flex: 1; width: 100%; padding: 10px 12px; font-size: 15px; border: 1px solid #bbb; border-radius: 6px; }
  .hint { font-size: 12px; color: var(--muted); margin-top: 4px; }
  #modal-backdrop { position: fixed; inset: 0; background: rgba(0,0,0,.45); display: none; align-items: center; justify-content: center; }
  #modal { background: #fff; border-radius: 8px; width: min(560px, 94vw); max-height: 90vh; overflow-y: auto; padding: 18px 22px; }
  #modal h2 { margin: 0 0 12px; font-size: 20px; }
  #modal label { display: block; font-weight: 700; margin-top: 12px; }
  #modal select, #modal textarea, #modal input[type=text], #modal input[type=number], #modal input[type=url] { width: 100%; padding: 6px 8px; margin-top: 4px; border: 1px solid #bbb; border-radius: 4px; font: inherit; }
  #modal textarea { min-height: 90px; font-family: monospace; }
  #modal input[type=checkbox] { margin-left: 8px; transform: scale(1.2); }
  #modal .checkbox-text { font-weight: 400; }
  .field-hint { color: var(--muted); font-size: 12px; }
  .field-error { color: #e01e5a; font-size: 13px; margin-top: 2px; }
  .modal-actions { display: flex; justify-content: flex-end; gap: 8px; margin-top: 16px; }
</style>
</head>
<body>
<header><nav><button type="button" class="tab active" id="tab-channel"># general</button><button type="button" class="tab" id="tab-home">GPU Cloud · Home</button><button type="button" class="tab" id="tab-dm">GPU Cloud · Messages</button><button type="button" class="tab" id="tab-steps">Workflow steps</button></nav><span>local Slack stand-in (127.0.0.1)</span></header>
<section id="home" hidden aria-label="GPU Cloud Home"></section>
<section id="steps" hidden aria-label="Workflow steps"><h2>Run a workflow step</h2><p class="hint">Runs one of the app's Workflow Builder steps as a workflow reaching it would: Slack sends the app <code>function_executed</code> with the inputs and a per-run token, and the step ends when the app completes or fails it.</p><form id="step-form"><label for="step-choice">Step</label><select id="step-choice"></select><div id="step-inputs"></div><div class="field-error" id="step-refused" role="alert"></div><div class="modal-actions"><button type="submit" class="slack-button primary">Run step</button></div></form><h3>Runs</h3><div id="step-runs"></div></section>
<div id="main">
  <main id="feed" aria-live="polite"></main>
  <aside id="pane" hidden aria-label="Thread"><div class="pane-head"><b>Thread</b><button type="button" class="slack-button" id="pane-close" aria-label="Close thread">✕</button></div><div id="pane-body"></div></aside>
</div>
<footer>
  <form id="composer-form"><button type="button" class="slack-button" id="shortcuts-button" aria-label="Shortcuts" title="Shortcuts">⚡</button><button type="button" class="slack-button" id="assistant-new" hidden>✨ New assistant chat</button><button type="button" class="slack-button" id="attach-button" aria-label="Attach a file" title="Attach a file">📎</button><input type="file" id="attach-file" hidden><input id="composer" autocomplete="off" placeholder="Type /gpu help, /gpu image a red fox, /gpu chat hello…" aria-label="Message #general"></form>
  <div class="hint">Commands go to the app signed like Slack's; reply in a thread to continue a chat.</div>
</footer>
<div id="modal-backdrop"><form id="modal"></form></div>
<div id="confirm-backdrop"><div id="confirm" role="alertdialog" aria-modal="true"><h3></h3><p></p><div class="modal-actions"><button type="button" class="slack-button" data-answer="deny"></button><button type="button" class="slack-button primary" data-answer="confirm"></button></div></div></div>
<script>
(() => {
  const EMOJI = { white_check_mark: '✅', x: '❌', gear: '⚙️', hourglass_flowing_sand: '⏳', no_entry_sign: '🚫', warning: '⚠️', no_entry: '⛔', robot_face: '🤖', frame_with_picture: '🖼️', memo: '📝', speech_balloon: '💬' };
  let state = null;
  /** The modal as last drawn (id, hash, errors); redrawn only when one of them changes. */
  let shownModal = '';
  const drafts = new Map();
  /** The thread open in the side pane, as Slack opens one from "N replies". */
  let openThread = null;
  /** Ephemeral messages live in the client, as in Slack: a reload shows none of the earlier ones. */
  const openedAt = Date.now() / 1000;
  // A permalink (?thread=<ts>) opens its thread, as Slack's links do.
  openThread = new URLSearchParams(location.search).get('thread');
  let tab = 'channel';
  /** The conversation shown: the channel, or the direct messages with the app. */
  let conversationId = null;

  function showTab(name) {
    tab = name;
    for (const other of ['channel', 'home', 'dm', 'steps']) document.getElementById('tab-' + other).classList.toggle('active', name === other);
    const away = name === 'home' || name === 'steps';
    document.getElementById('main').hidden = away;
    document.querySelector('footer').hidden = away;
    document.getElementById('steps').hidden = name !== 'steps';
    // The older assistant container has its own "new chat" button; agent messaging uses the composer.
    document.getElementById('assistant-new').hidden = name !== 'dm' || !state || state.experience !== 'assistant';
    document.getElementById('home').hidden = name !== 'home';
    if (!away && state) {
      const wanted = state.conversations[name === 'dm' ? 1 : 0];
      document.getElementById('composer').placeholder = name === 'dm' ? 'Message GPU Cloud…' : 'Type /gpu help, /gpu image a red fox, /gpu chat hello…';
      if (conversationId !== wanted.id) { conversationId = wanted.id; openThread = null; scheduleRefresh(); }
    }
    if (state) { renderHome(); renderSteps(); }
  }

  /** The step form is drawn again only when the step or the files it can pick change, so typing is kept. */
  let stepFormKey = '';

  function stepField(input) {
    const id = 'step-input-' + input.name;
    const label = el('label', '', escapeHtml(input.title) + (input.required ? '' : ' <span class="field-hint">(optional)</span>'));
    label.setAttribute('for', id);
    let field;
    const choices = (options, chosen) => {
      field = document.createElement('select');
      for (const option of options) {
        const node = document.createElement('option');
        node.value = option.value;
        node.textContent = option.label;
        node.selected = option.value === chosen;
        field.appendChild(node);
      }
    };
    if (input.type === 'slack#/types/channel_id') choices(state.conversations.map((c) => ({ value: c.id, label: (c.id.startsWith('D') ? '' : '#') + c.name })), conversationId);
    else if (input.type === 'slack#/types/user_id') choices([{ value: state.me.id, label: state.me.name }], state.me.id);
    else if (input.type === 'slack#/types/file_id') choices([{ value: '', label: state.stepFiles.length ? 'Choose a file…' : 'No file shared yet: attach one in #general' }, ...state.stepFiles.map((f) => ({ value: f.id, label: f.name }))], '');
    else if (input.type === 'integer') { field = document.createElement('input'); field.type = 'number'; field.step = '1'; }
    else field = document.createElement('textarea');
    field.id = id;
    field.name = input.name;
    const wrap = el('div', 'step-field');
    wrap.appendChild(label);
    wrap.appendChild(field);
    if (input.description) wrap.appendChild(el('div', 'field-hint', escapeHtml(input.description)));
    return wrap;
  }

  function renderSteps() {
    if (tab !== 'steps') return;
    const select = document.getElementById('step-choice');
    const chosen = select.value || (state.steps[0] && state.steps[0].callbackId);
    if (select.options.length !== state.steps.length) {
      select.replaceChildren(...state.steps.map((step) => { const option = document.createElement('option'); option.value = step.callbackId; option.textContent = step.title; return option; }));
      select.value = chosen;
    }
    const step = state.steps.find((candidate) => candidate.callbackId === select.value);
    const key = (step ? step.callbackId : '') + '|' + state.stepFiles.map((f) => f.id).join(',');
    if (step && key !== stepFormKey) {
      const inputs = document.getElementById('step-inputs');
      const kept = new Map([...inputs.querySelectorAll('[name]')].map((field) => [field.name, field.value]));
      inputs.replaceChildren(...(step.description ? [el('p', 'hint', escapeHtml(step.description))] : []), ...step.inputs.map(stepField));
      if (key.split('|')[0] === stepFormKey.split('|')[0]) for (const field of inputs.querySelectorAll('[name]')) if (kept.get(field.name)) field.value = kept.get(field.name);
      stepFormKey = key;
    }
    const runs = document.getElementById('step-runs');
    runs.replaceChildren(...(state.stepRuns.length ? state.stepRuns.map(renderStepRun) : [el('div', 'context', 'No step has run yet.')]));
  }

  function renderStepRun(run) {
    const node = el('div', 'step-run');
    node.setAttribute('role', 'article');
    node.setAttribute('aria-label', run.title + ' ' + run.id);
    node.dataset.state = run.state;
    const stateText = { running: 'Running…', completed: 'Completed', failed: 'Failed' }[run.state];
    node.appendChild(el('div', 'meta', '<b>' + escapeHtml(run.title) + '</b> · ' + stateText));
    if (run.error) node.appendChild(el('div', 'step-error', escapeHtml(run.error)));
    if (run.outputs) {
      const step = state.steps.find((candidate) => candidate.callbackId === run.callbackId);
      const list = document.createElement('dl');
      for (const [name, value] of Object.entries(run.outputs)) {
        const output = step && step.outputs.find((candidate) => candidate.name === name);
        list.appendChild(el('dt', '', escapeHtml(output ? output.title : name)));
        const file = output && output.type === 'slack#/types/file_id' ? state.stepFiles.find((f) => f.id === value) : null;
        list.appendChild(el('dd', '', file ? '<a href="/ui/files/' + encodeURIComponent(file.id) + '" target="_blank">' + escapeHtml(file.name) + '</a>' : escapeHtml(typeof value === 'string' ? value : JSON.stringify(value))));
      }
      node.appendChild(list);
    }
    return node;
  }

  function renderHome() {
    const home = document.getElementById('home');
    if (tab !== 'home') return;
    if (!state.home) { home.replaceChildren(el('div', 'context', 'Loading…')); return; }
    home.replaceChildren(renderBlocks(state.home.blocks || [], { home: true }));
  }

  const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const decode = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

  function userName(id) {
    if (state && id === state.me.id) return state.me.name;
    if (state && id === state.bot.id) return state.bot.name;
    return id;
  }

  function ago(epoch) {
    const seconds = Math.max(0, Math.round(Date.now() / 1000 - epoch));
    const unit = (n, word) => n + ' ' + word + (n === 1 ? '' : 's') + ' ago';
    if (seconds < 60) return unit(seconds, 'second');
    if (seconds < 3600) return unit(Math.floor(seconds / 60), 'minute');
    if (seconds < 86400) return unit(Math.floor(seconds / 3600), 'hour');
    return unit(Math.floor(seconds / 86400), 'day');
  }

  /** Slack's <!date^epoch^format|fallback> tokens, in the reader's own time zone and locale. */
  function formatDate(epoch, format) {
    const at = new Date(epoch * 1000);
    const today = new Date();
    const yesterday = new Date(Date.now() - 86400000);
    const prettyDay = at.toDateString() === today.toDateString() ? 'Today' : at.toDateString() === yesterday.toDateString() ? 'Yesterday' : null;
    const tokens = {
      ago: () => ago(epoch),
      time: () => at.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' }),
      time_secs: () => at.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit', second: '2-digit' }),
      date_num: () => at.toISOString().slice(0, 10),
      date: () => at.toLocaleDateString([], { year: 'numeric', month: 'long', day: 'numeric' }),
      date_short: () => at.toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' }),
      date_long: () => at.toLocaleDateString([], { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }),
      date_pretty: () => prettyDay || tokens.date(),
      date_short_pretty: () => prettyDay || tokens.date_short(),
      date_long_pretty: () => prettyDay || tokens.date_long(),
    };
    return format.replace(/\\{([a-z_]+)\\}/g, (m, name) => (tokens[name] ? tokens[name]() : m));
  }

  // Relative times tick in the reader's client, between the app's edits.
  setInterval(() => {
    for (const node of document.querySelectorAll('time.slack-date')) {
      if (node.dataset.format.includes('{ago}')) node.textContent = formatDate(Number(node.dataset.epoch), node.dataset.format);
    }
  }, 1000);

  /** Slack mrkdwn to safe HTML: links and mentions first, then escape, then formatting. */
  function mrkdwn(source) {
    const saved = [];
    const keep = (html) => '\\u0000' + (saved.push(html) - 1) + '\\u0000';
    let s = source.replace(/<([^<>]+)>/g, (_, inner) => {
      const [target, label] = inner.split('|');
      const date = /^!date\\^(\\d+)\\^([^^]*)/.exec(target);
      if (date) return keep('<time class="slack-date" data-epoch="' + date[1] + '" data-format="' + escapeHtml(date[2]) + '">' + escapeHtml(formatDate(Number(date[1]), date[2])) + '</time>');
      if (target.startsWith('@')) return keep('<span class="mention">@' + escapeHtml(userName(target.slice(1))) + '</span>');
      if (target.startsWith('#')) return keep('<span class="mention">#' + escapeHtml(label || target.slice(1)) + '</span>');
      if (/^https?:\\/\\//.test(decode(target))) return keep('<a href="' + escapeHtml(decode(target)) + '" target="_blank" rel="noopener">' + escapeHtml(decode(label || target)) + '</a>');
      return keep(escapeHtml(decode(inner)));
    });
    s = escapeHtml(decode(s));
    s = s.replace(/\`\`\`([\\s\\S]*?)\`\`\`/g, (_, code) => keep('<pre>' + code.replace(/^\\n/, '') + '</pre>'));
    s = s.replace(/\`([^\`\\n]+)\`/g, (_, code) => keep('<code>' + code + '</code>'));
    s = s.replace(/(^|[\\s(])\\*([^*\\n]+)\\*/g, '$1<b>$2</b>');
    s = s.replace(/(^|[\\s(])_([^_\\n]+)_/g, '$1<i>$2</i>');
    s = s.replace(/(^|[\\s(])~([^~\\n]+)~/g, '$1<s>$2</s>');
    s = s.replace(/(^|\\n)&gt; ?([^\\n]*)/g, '$1<blockquote>$2</blockquote>');
    s = s.replace(/:([a-z0-9_+-]+):/g, (m, name) => EMOJI[name] || m);
    s = s.replace(/\\n/g, '<br>');
    return s.replace(/\\u0000(\\d+)\\u0000/g, (_, i) => saved[Number(i)]);
  }

  /** Standard Markdown (answers of the model) to safe HTML: the subset models use. */
  function markdown(source) {
    const saved = [];
    const keep = (html) => '\\u0000' + (saved.push(html) - 1) + '\\u0000';
    let s = escapeHtml(source);
    s = s.replace(/\`\`\`[^\\n]*\\n?([\\s\\S]*?)\`\`\`/g, (_, code) => keep('<pre>' + code + '</pre>'));
    s = s.replace(/\`([^\`\\n]+)\`/g, (_, code) => keep('<code>' + code + '</code>'));
    s = s.replace(/\\[([^\\]]+)\\]\\((https?:[^)\\s]+)\\)/g, (_, label, url) => keep('<a href="' + url + '" target="_blank" rel="noopener">' + label + '</a>'));
    s = s.replace(/\\*\\*([^*\\n]+)\\*\\*/g, '<b>$1</b>');
    s = s.replace(/(^|[\\s(])[*_]([^*_\\n]+)[*_]/g, '$1<i>$2</i>');
    s = s.replace(/(^|\\n)#{1,6} ([^\\n]*)/g, '$1<b>$2</b>');
    s = s.replace(/(^|\\n)[-*] /g, '$1• ');
    s = s.replace(/\\n/g, '<br>');
    return s.replace(/\\u0000(\\d+)\\u0000/g, (_, i) => saved[Number(i)]);
  }

  function textObject(t) {
    if (!t) return '';
    return t.type === 'mrkdwn' ? mrkdwn(t.text) : escapeHtml(t.text).replace(/\\n/g, '<br>');
  }

  function el(tag, className, html) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (html !== undefined) node.innerHTML = html;
    return node;
  }

  function button(element, source) {
    const b = el('button', 'slack-button' + (element.style ? ' ' + element.style : ''), textObject(element.text));
    b.type = 'button';
    b.dataset.actionId = element.action_id;
    b.addEventListener('click', async () => {
      if (element.confirm && !(await confirmDialog(element.confirm))) return;
      b.disabled = true;
      if (source.home) await post('/ui/home-action', { actionId: element.action_id, value: element.value, blockId: source.blockId });
      else await post('/ui/action', { ...source, actionId: element.action_id, value: element.value });
    });
    return b;
  }

  /** Slack's confirmation dialog: its title, text and the app's own words on both buttons. */
  function confirmDialog(confirm) {
    const backdrop = document.getElementById('confirm-backdrop');
    const box = document.getElementById('confirm');
    box.querySelector('h3').textContent = confirm.title ? confirm.title.text : 'Are you sure?';
    box.querySelector('p').textContent = confirm.text ? confirm.text.text : '';
    const yes = box.querySelector('[data-answer=confirm]');
    const no = box.querySelector('[data-answer=deny]');
    yes.textContent = confirm.confirm ? confirm.confirm.text : 'Yes';
    no.textContent = confirm.deny ? confirm.deny.text : 'Cancel';
    yes.classList.toggle('danger', confirm.style === 'danger');
    backdrop.style.display = 'flex';
    return new Promise((resolve) => {
      const answer = (value) => () => { backdrop.style.display = 'none'; yes.onclick = null; no.onclick = null; resolve(value); };
      yes.onclick = answer(true);
      no.onclick = answer(false);
    });
  }

  function renderBlocks(blocks, source) {
    const out = document.createDocumentFragment();
    for (const block of blocks) {
      let node;
      switch (block.type) {
        case 'section':
          node = el('div', 'block section', textObject(block.text));
          if (block.fields) for (const f of block.fields) node.appendChild(el('div', '', textObject(f)));
          break;
        case 'context':
          node = el('div', 'block context', (block.elements || []).map((e) => (e.type === 'image' ? '' : textObject(e))).join(' '));
          break;
        case 'header':
          node = el('div', 'block header-block', textObject(block.text));
          break;
        case 'markdown':
          node = el('div', 'block markdown', markdown(block.text || ''));
          break;
        case 'divider':
          node = el('hr', 'block');
          break;
        case 'image':
          node = el('div', 'block');
          { const img = el('img'); img.src = block.image_url; img.alt = block.alt_text || ''; img.style.maxWidth = '360px'; node.appendChild(img); }
          break;
        case 'context_actions':
          // Slack's feedback buttons: 👍 and 👎, each carrying its own value.
          node = el('div', 'block actions');
          for (const element of block.elements || []) {
            if (element.type !== 'feedback_buttons') continue;
            for (const choice of [element.positive_button, element.negative_button]) {
              const b = el('button', 'slack-button', escapeHtml(choice.text.text));
              b.type = 'button';
              b.setAttribute('aria-label', choice.accessibility_label || choice.text.text);
              b.addEventListener('click', () => post('/ui/action', { ...source, blockId: block.block_id, actionId: element.action_id, value: choice.value, actionType: 'feedback_buttons' }));
              node.appendChild(b);
            }
          }
          break;
        case 'actions':
          node = el('div', 'block actions');
          for (const element of block.elements || []) {
            if (element.type === 'button') node.appendChild(button(element, { ...source, blockId: block.block_id }));
          }
          break;
        default:
          node = el('div', 'block context', '[' + escapeHtml(block.type) + ' block]');
      }
      out.appendChild(node);
    }
    return out;
  }

  function renderFiles(files) {
    const out = document.createDocumentFragment();
    for (const file of files) {
      const box = el('div', 'file');
      if (file.mimetype.startsWith('image/')) {
        const img = el('img', 'file-image');
        img.src = file.url;
        img.alt = file.title;
        box.appendChild(img);
      }
      const link = el('a', 'file-link', '📎 ' + escapeHtml(file.name));
      link.href = file.url;
      link.target = '_blank';
      box.appendChild(link);
      out.appendChild(box);
    }
    return out;
  }

  /** A small menu under the anchor, as Slack's shortcut and "More actions" menus. */
  function showMenu(anchor, items) {
    document.querySelectorAll('.menu').forEach((menu) => menu.remove());
    const menu = el('div', 'menu');
    menu.setAttribute('role', 'menu');
    for (const item of items) {
      const entry = el('button', '', escapeHtml(item.label));
      entry.type = 'button';
      entry.setAttribute('role', 'menuitem');
      entry.addEventListener('click', () => { menu.remove(); item.run(); });
      menu.appendChild(entry);
    }
    const box = anchor.getBoundingClientRect();
    menu.style.left = Math.min(box.left, window.innerWidth - 320) + 'px';
    if (box.top > window.innerHeight / 2) menu.style.bottom = (window.innerHeight - box.top + 4) + 'px';
    else menu.style.top = (box.bottom + 4) + 'px';
    document.body.appendChild(menu);
    setTimeout(() => document.addEventListener('click', () => menu.remove(), { once: true }));
  }

  function shortcutsOf(type) {
    return (state.shortcuts || []).filter((shortcut) => shortcut.type === type);
  }

  const TASK_MARKS = { pending: '○', in_progress: '◐', complete: '✓', error: '✕' };

  /** A stream's plan and tasks (chat.*Stream task_update / plan_update chunks), above its text. */
  function renderTasks(message) {
    const list = el('div', 'tasks');
    list.setAttribute('role', 'list');
    list.setAttribute('aria-label', message.planTitle || 'Tasks');
    if (message.planTitle) list.appendChild(el('div', 'plan-title', escapeHtml(message.planTitle)));
    for (const task of message.tasks) {
      const item = el('div', 'task task-' + task.status, '<span aria-hidden="true">' + TASK_MARKS[task.status] + '</span> ' + escapeHtml(task.title));
      item.setAttribute('role', 'listitem');
      item.dataset.status = task.status;
      for (const detail of [task.details, task.output]) if (detail) item.appendChild(el('div', 'task-detail', escapeHtml(detail)));
      list.appendChild(item);
    }
    return list;
  }

  function renderMessage(message, inThread) {
    const node = el('div', 'message');
    node.dataset.ts = message.ts;
    if (shortcutsOf('message').length) {
      const more = el('button', 'more-actions', '⋯');
      more.type = 'button';
      more.setAttribute('aria-label', 'More actions');
      more.addEventListener('click', () => showMenu(more, shortcutsOf('message').map((shortcut) => ({ label: shortcut.name, run: () => post('/ui/shortcut', { callbackId: shortcut.callbackId, messageTs: message.ts }) }))));
      node.appendChild(more);
    }
    const when = new Date(Number(message.ts) * 1000).toLocaleTimeString();
    node.appendChild(el('div', 'meta', '<b>' + escapeHtml(userName(message.user)) + '</b>' + (message.bot ? '<span class="app-badge">APP</span>' : '') + ' ' + when + (message.edited ? ' (edited)' : '')));
    const source = { messageTs: message.ts };
    const body = el('div', 'body' + (message.streaming ? ' streaming' : ''));
    if (message.session && !inThread) node.appendChild(renderSession(message));
    if (message.assistant && !inThread) body.appendChild(el('div', 'block', '<b>✨ ' + escapeHtml(message.assistant.title || 'New chat') + '</b>'));
    else if (message.markdown) {
      if (message.planTitle || message.tasks.length) body.appendChild(renderTasks(message));
      body.appendChild(el('div', 'block markdown', markdown(message.text)));
    }
    if (message.blocks && message.blocks.length) body.appendChild(renderBlocks(message.blocks, source));
    else if (message.text && !message.markdown && !message.assistant) body.innerHTML = mrkdwn(message.text);
    node.appendChild(body);
    node.appendChild(renderFiles(message.files));
    if (!inThread && (message.replies.length || message.bot)) {
      const count = message.replies.length;
      const link = el('button', 'replies-link', count ? count + (count === 1 ? ' reply' : ' replies') : 'Reply in thread');
      link.type = 'button';
      link.addEventListener('click', () => { openThread = message.ts; renderPane(); });
      node.appendChild(link);
    }
    return node;
  }

  /** The side pane: the open thread's parent, its replies, private notes in it, and a reply box. */
  function renderPane() {
    const pane = document.getElementById('pane');
    const parent = openThread && state.messages.find((m) => m.ts === openThread);
    if (!parent) { pane.hidden = true; openThread = null; return; }
    const body = document.getElementById('pane-body');
    const focused = document.activeElement && document.activeElement.closest('#pane') && document.activeElement.tagName === 'INPUT';
    const thread = el('div', 'thread');
    thread.dataset.threadTs = parent.ts;
    const assistant = parent.assistant;
    document.querySelector('.pane-head b').textContent = assistant ? (assistant.title || 'New chat') : 'Thread';
    if (!assistant) thread.appendChild(renderMessage(parent, true));
    const replies = el('div', 'pane-replies');
    const items = [
      ...parent.replies.map((m) => ({ ts: Number(m.ts), node: () => renderMessage(m, true) })),
      ...visibleEphemerals().filter((m) => m.threadTs === parent.ts).map((m) => ({ ts: Number(m.ts), node: () => renderEphemeral(m) })),
    ].sort((a, b) => a.ts - b.ts);
    for (const item of items) replies.appendChild(item.node());
    thread.appendChild(replies);
    if (parent.session) thread.appendChild(renderSession(parent));
    if (assistant && assistant.status) thread.appendChild(el('div', 'assistant-status', escapeHtml(state.bot.name + ' ' + assistant.status)));
    if (assistant && assistant.prompts.length && !parent.replies.some((m) => !m.bot)) {
      const prompts = el('div', 'prompts');
      for (const prompt of assistant.prompts) {
        const chip = el('button', 'slack-button', escapeHtml(prompt.title));
        chip.type = 'button';
        chip.addEventListener('click', () => post('/ui/reply', { threadTs: parent.ts, text: prompt.message }));
        prompts.appendChild(chip);
      }
      thread.appendChild(prompts);
    }
    const form = el('form', 'thread-reply');
    const input = el('input');
    input.placeholder = 'Reply…';
    input.setAttribute('aria-label', 'Reply in thread');
    input.value = drafts.get(parent.ts) || '';
    input.addEventListener('input', () => drafts.set(parent.ts, input.value));
    form.appendChild(input);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      drafts.delete(parent.ts);
      input.value = '';
      await post('/ui/reply', { threadTs: parent.ts, text: value });
    });
    thread.appendChild(form);
    body.replaceChildren(thread);
    pane.hidden = false;
    if (focused) input.focus();
  }

  document.getElementById('shortcuts-button').addEventListener('click', (event) => {
    showMenu(event.currentTarget, shortcutsOf('global').map((shortcut) => ({ label: shortcut.name, run: () => post('/ui/shortcut', { callbackId: shortcut.callbackId }) })));
  });

  document.getElementById('tab-channel').addEventListener('click', () => showTab('channel'));
  document.getElementById('tab-dm').addEventListener('click', async () => {
    showTab('dm');
    await post('/ui/messages-opened', {});
  });
  document.getElementById('assistant-new').addEventListener('click', async () => {
    const started = await post('/ui/assistant-new', {});
    if (started.threadTs) { openThread = started.threadTs; scheduleRefresh(); }
  });
  document.getElementById('tab-steps').addEventListener('click', () => showTab('steps'));
  document.getElementById('step-choice').addEventListener('change', () => renderSteps());
  document.getElementById('step-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const inputs = {};
    for (const field of document.querySelectorAll('#step-inputs [name]')) inputs[field.name] = field.value;
    const refused = document.getElementById('step-refused');
    refused.textContent = '';
    const ran = await post('/ui/run-step', { callbackId: document.getElementById('step-choice').value, inputs });
    if (!ran.ok) refused.textContent = ran.error || 'The step could not run.';
  });
  document.getElementById('tab-home').addEventListener('click', async () => {
    showTab('home');
    await post('/ui/home-opened', {});
  });

  document.getElementById('pane-close').addEventListener('click', () => { openThread = null; renderPane(); });

  function visibleEphemerals() {
    return state.ephemerals.filter((m) => Number(m.ts) >= openedAt);
  }

  function renderEphemeral(message) {
    const node = el('div', 'ephemeral');
    node.dataset.ephemeralId = message.id;
    node.appendChild(el('div', 'meta', '<b>' + escapeHtml(state.bot.name) + '</b><span class="app-badge">APP</span> · Only visible to you'));
    const body = el('div', 'body');
    if (message.blocks && message.blocks.length) body.appendChild(renderBlocks(message.blocks, { ephemeralId: message.id }));
    else body.innerHTML = mrkdwn(message.text);
    node.appendChild(body);
    const dismiss = el('button', 'slack-button', 'Dismiss');
    dismiss.type = 'button';
    dismiss.addEventListener('click', () => post('/ui/dismiss', { ephemeralId: message.id }));
    node.appendChild(dismiss);
    return node;
  }

  /** An agent session's title and status; while it is processing, Slack's stop button. */
  function renderSession(message) {
    const session = message.session;
    const node = el('div', 'session', (session.title ? '<b>' + escapeHtml(session.title) + '</b> · ' : '') + escapeHtml(session.status));
    node.dataset.sessionStatus = session.status;
    if (session.status === 'processing') {
      const stop = el('button', 'stop', '■ Stop');
      stop.type = 'button';
      stop.setAttribute('aria-label', 'Stop');
      stop.addEventListener('click', () => post('/ui/session-stop', { threadTs: message.ts }));
      node.appendChild(stop);
    }
    return node;
  }

  /** Agent messaging: the app's suggested prompts at the top of its Messages tab; a click sends one. */
  function renderMessagesTabPrompts() {
    const offer = state.messagesTabPrompts;
    if (tab !== 'dm' || !offer || !offer.prompts.length) return [];
    const prompts = el('div', 'prompts', offer.title ? '<span class="context">' + escapeHtml(offer.title) + '</span>' : '');
    prompts.id = 'messages-tab-prompts';
    for (const prompt of offer.prompts) {
      const chip = el('button', 'slack-button', escapeHtml(prompt.title));
      chip.type = 'button';
      chip.addEventListener('click', () => post('/ui/command', { text: prompt.message }));
      prompts.appendChild(chip);
    }
    return [prompts];
  }

  function renderFeed() {
    const feed = document.getElementById('feed');
    const nearBottom = feed.scrollHeight - feed.scrollTop - feed.clientHeight < 80;
    const items = [
      ...state.messages.map((m) => ({ ts: Number(m.ts), node: () => renderMessage(m, false) })),
      ...visibleEphemerals().filter((m) => !m.threadTs).map((m) => ({ ts: Number(m.ts), node: () => renderEphemeral(m) })),
    ].sort((a, b) => a.ts - b.ts);
    feed.replaceChildren(...renderMessagesTabPrompts(), ...items.map((item) => item.node()));
    if (nearBottom) feed.scrollTop = feed.scrollHeight;
  }

  function renderModal() {
    const backdrop = document.getElementById('modal-backdrop');
    const form = document.getElementById('modal');
    if (!state.view) { shownModal = ''; form.dataset.viewId = ''; backdrop.style.display = 'none'; return; }
    const key = JSON.stringify(state.view);
    if (key === shownModal) return;
    shownModal = key;
    const { id, hash, view, errors } = state.view;
    // Like Slack: the same view (field errors, or views.update) keeps what the person typed in the
    // blocks it still has; a new view starts afresh.
    const typed = new Map();
    if (form.dataset.viewId === id) {
      for (const control of form.querySelectorAll('[data-block-id]')) typed.set(control.dataset.blockId, control.type === 'checkbox' ? control.checked : control.type === 'file' ? { fileId: control.dataset.fileId, fileName: control.dataset.fileName } : control.value);
    }
    form.replaceChildren();
    form.dataset.hash = hash;
    form.dataset.viewId = id;
    form.appendChild(el('h2', '', escapeHtml(view.title ? view.title.text : 'App')));
    for (const block of view.blocks || []) {
      if (block.type !== 'input') { form.appendChild(renderBlocks([block], {})); continue; }
      const label = el('label', '', escapeHtml(block.label.text) + (block.optional ? ' <span class="field-hint">(optional)</span>' : ''));
      const element = block.element;
      let control;
      if (element.type === 'conversations_select') {
        // The stand-in has one channel: the one the person is looking at.
        control = el('select');
        control.appendChild(el('option', '', 'Choose a channel…'));
        control.firstChild.value = '';
        const current = el('option', '', '# ' + escapeHtml(state.channel.name));
        current.value = state.channel.id;
        current.selected = element.default_to_current_conversation === true;
        control.appendChild(current);
      } else if (element.type === 'static_select') {
        control = el('select');
        control.appendChild(el('option', '', escapeHtml(element.placeholder ? element.placeholder.text : 'Choose…')));
        control.firstChild.value = '';
        for (const option of element.options || []) {
          const o = el('option', '', escapeHtml(option.text.text));
          o.value = option.value;
          if (element.initial_option && element.initial_option.value === option.value) o.selected = true;
          control.appendChild(o);
        }
        if (block.dispatch_action) {
          // Slack sends the choice at once (a block action from the view); the app may rebuild the view.
          control.addEventListener('change', () => {
            if (!control.value) return;
            post('/ui/view-select', { viewId: id, blockId: block.block_id, actionId: element.action_id, value: control.value, label: control.selectedOptions[0].text, values: viewValues(form) });
          });
        }
      } else if (element.type === 'checkboxes') {
        // One box per option; the stand-in's forms use a single yes/no box.
        control = el('input');
        control.type = 'checkbox';
        control.value = element.options && element.options[0] ? element.options[0].value : 'true';
        control.dataset.optionText = element.options && element.options[0] ? element.options[0].text.text : '';
        control.checked = Array.isArray(element.initial_options) && element.initial_options.length > 0;
      } else if (element.type === 'number_input') {
        control = el('input');
        control.type = 'number';
        control.step = element.is_decimal_allowed ? 'any' : '1';
        if (element.min_value !== undefined) control.min = element.min_value;
        if (element.max_value !== undefined) control.max = element.max_value;
        if (element.initial_value !== undefined) control.value = element.initial_value;
      } else if (element.type === 'file_input') {
        // Like Slack's client: the chosen file is uploaded at once; the submission carries its file object.
        control = el('input');
        control.type = 'file';
        if (Array.isArray(element.filetypes)) control.accept = element.filetypes.map((type) => '.' + type).join(',');
        control.addEventListener('change', async () => {
          const chosen = control.files[0];
          delete control.dataset.fileId;
          if (!chosen) return;
          const uploaded = await post('/ui/view-file', { name: chosen.name, contentBase64: await base64Of(chosen) });
          control.dataset.fileId = uploaded.id;
          control.dataset.fileName = chosen.name;
        });
      } else if (element.type === 'url_text_input') {
        control = el('input');
        control.type = 'url';
        if (element.placeholder) control.placeholder = element.placeholder.text;
        if (element.initial_value) control.value = element.initial_value;
      } else {
        control = el(element.multiline ? 'textarea' : 'input');
        if (!element.multiline) control.type = 'text';
        if (element.placeholder) control.placeholder = element.placeholder.text;
        if (element.initial_value) control.value = element.initial_value;
      }
      if (typed.has(block.block_id)) {
        if (control.type === 'checkbox') control.checked = typed.get(block.block_id) === true;
        else if (control.type === 'file') {
          // A file input cannot be given a file back: its upload is kept, and named beside it.
          const kept = typed.get(block.block_id);
          if (kept && kept.fileId) {
            control.dataset.fileId = kept.fileId;
            control.dataset.fileName = kept.fileName;
            label.appendChild(el('div', 'field-hint', '📎 ' + escapeHtml(kept.fileName)));
          }
        }
        else if (control.tagName !== 'SELECT' || [...control.options].some((o) => o.value === typed.get(block.block_id))) control.value = typed.get(block.block_id);
      }
      control.dataset.blockId = block.block_id;
      control.dataset.actionId = element.action_id;
      control.dataset.kind = element.type;
      control.name = block.block_id;
      label.appendChild(control);
      if (control.type === 'checkbox') label.appendChild(el('span', 'checkbox-text', ' ' + escapeHtml(control.dataset.optionText)));
      if (block.hint) label.appendChild(el('div', 'field-hint', escapeHtml(block.hint.text)));
      if (errors[block.block_id]) label.appendChild(el('div', 'field-error', escapeHtml(errors[block.block_id])));
      form.appendChild(label);
    }
    if (errors['']) form.appendChild(el('div', 'field-error', escapeHtml(errors[''])));
    const actions = el('div', 'modal-actions');
    const close = el('button', 'slack-button', escapeHtml(view.close ? view.close.text : 'Close'));
    close.type = 'button';
    close.addEventListener('click', () => post('/ui/view-close', { viewId: id }));
    actions.appendChild(close);
    if (view.submit) {
      const submit = el('button', 'slack-button primary', escapeHtml(view.submit.text));
      submit.type = 'submit';
      actions.appendChild(submit);
    }
    form.appendChild(actions);
    backdrop.style.display = 'flex';
  }

  document.getElementById('modal').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    await post('/ui/view-submit', { viewId: form.dataset.viewId, values: viewValues(form), files: viewFiles(form) });
  });

  /** The files attached in the view's file inputs, by block: Slack puts their file objects in the state. */
  function viewFiles(form) {
    const files = {};
    for (const control of form.querySelectorAll('[data-kind="file_input"]')) files[control.dataset.blockId] = control.dataset.fileId ? [control.dataset.fileId] : [];
    return files;
  }

  async function base64Of(file) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    let binary = '';
    for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(at, at + 0x8000));
    return btoa(binary);
  }

  /** The view's state as Slack sends it: \`values[blockId][actionId]\`, shaped by each element's type. */
  function viewValues(form) {
    const values = {};
    for (const control of form.querySelectorAll('[data-block-id]')) {
      const kind = control.dataset.kind;
      if (kind === 'file_input') continue;
      const entry = kind === 'static_select'
        ? { type: kind, selected_option: control.value ? { value: control.value, text: { type: 'plain_text', text: control.selectedOptions[0].text } } : null }
        : kind === 'conversations_select'
          ? { type: kind, selected_conversation: control.value || null }
          : kind === 'checkboxes'
            ? { type: kind, selected_options: control.checked ? [{ value: control.value, text: { type: 'plain_text', text: control.dataset.optionText } }] : [] }
            : { type: kind, value: control.value === '' ? null : control.value };
      values[control.dataset.blockId] = { [control.dataset.actionId]: entry };
    }
    return values;
  }

  async function post(path, body) {
    const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channel: conversationId, ...body }) });
    return response.json().catch(() => ({}));
  }

  async function refresh() {
    state = await (await fetch('/ui/state' + (conversationId ? '?channel=' + encodeURIComponent(conversationId) : ''))).json();
    renderFeed();
    renderPane();
    renderHome();
    renderSteps();
    renderModal();
    // Tells tests (and anyone curious) which workspace state the page shows.
    document.body.dataset.revision = String(state.revision);
  }

  // Attaching a file shares it in a message, with what the composer holds as its text (as Slack does).
  document.getElementById('attach-button').addEventListener('click', () => document.getElementById('attach-file').click());
  document.getElementById('attach-file').addEventListener('change', async (event) => {
    const chosen = event.target.files[0];
    event.target.value = '';
    if (!chosen) return;
    const contentBase64 = await base64Of(chosen);
    const input = document.getElementById('composer');
    const text = input.value.trim();
    input.value = '';
    await post('/ui/share-file', { name: chosen.name, contentBase64, text });
  });

  document.getElementById('composer-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = document.getElementById('composer');
    const value = input.value.trim();
    if (!value) return;
    input.value = '';
    await post('/ui/command', { text: value });
  });

  // Each change on the server pushes its revision; refreshes never overlap and none is lost.
  let running = false;
  let again = false;
  async function scheduleRefresh() {
    if (running) { again = true; return; }
    running = true;
    try { do { again = false; await refresh(); } while (again); } finally { running = false; }
  }
  new EventSource('/ui/events').onmessage = scheduleRefresh;
})();
</script>
</body>
</html>`;
}
