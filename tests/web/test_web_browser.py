"""The web page in a real browser: Debian's chromium driven by Playwright against a running server.

Plays whole hands and short games by pressing the page's buttons (and by keyboard), watches two
bots to the end, replays a log, and checks the showdown's points against the core's result. Every
main state is photographed at a laptop (1280x800) and a phone (390x844) size into
``$OKGIN_SCREENS`` (default: pytest's tmp dir); ``OKGIN_DOCS_SCREENSHOT=1`` also writes
docs/play_web.png. Skipped only when chromium or Playwright is missing (.ci/run installs both).

    python -m pytest -q -m browser tests/web/test_web_browser.py
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from support import serve_in_thread

from okgin import play
from okgin.web.views import headline, plain_score_line
from okgin_env.game.cards import card_pretty, parse_card
from okgin_env.game.melds import deadwood_after_discard

CHROMIUM = os.environ.get("OKGIN_CHROMIUM", "/usr/bin/chromium")
if not os.path.exists(CHROMIUM) and shutil.which("chromium"):
    CHROMIUM = shutil.which("chromium")
pytestmark = [pytest.mark.browser, pytest.mark.slow,  # a real browser: seconds a test
              pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                 reason=f"no chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")]
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')")
uvicorn = pytest.importorskip("uvicorn")

from okgin.web import WebConfig, create_app  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
TARGET = 25  #: the short games' target score


# ----------------------------------------------------------------------------- fixtures

def start_server(config: WebConfig) -> tuple[str, object, object, object]:
    """(url, app, uvicorn server, thread): the app on a free port of 127.0.0.1, served from a thread."""
    app = create_app(config)
    url, srv, thread = serve_in_thread(app)
    return url, app, srv, thread


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server whose games go to 25, against random (its default), expert or simple."""
    results = tmp_path_factory.mktemp("web") / "results.jsonl"
    url, app, srv, thread = start_server(WebConfig(opponent="random", allow=("expert", "simple"),
                                                   rules=play.Rules(target_score=TARGET), results=str(results)))
    yield {"url": url, "app": app, "results": results}
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    d = Path(os.environ.get("OKGIN_SCREENS") or tmp_path_factory.mktemp("screens"))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def page(browser, server):
    pg = browser.new_page(viewport=LAPTOP)
    errors = []
    pg.dialogs = {"accept": True, "seen": []}  # the page's confirm(): accepted unless a test says otherwise

    def on_dialog(d):
        pg.dialogs["seen"].append(d.message)
        d.accept() if pg.dialogs["accept"] else d.dismiss()
    pg.on("dialog", on_dialog)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # a refused move is a 4xx the page shows in words (the browser logs it too): not a page error
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "status of 4" not in m.text else None)
    pg.goto(server["url"] + "/")
    pg.wait_for_selector("#hand .card")  # the page starts a game against the server's opponent
    settle(pg)
    yield pg
    pg.close()
    assert not errors, errors


def shoot(pg, screens: Path, name: str) -> None:
    """A laptop and a phone picture of the page as it is now."""
    pg.screenshot(path=str(screens / f"{name}-laptop.png"), full_page=True)
    pg.set_viewport_size(PHONE)
    pg.screenshot(path=str(screens / f"{name}-phone.png"), full_page=True)
    pg.set_viewport_size(LAPTOP)


# ----------------------------------------------------------------------------- playing by buttons

def new_game(pg, opponent: str, hand_only: bool) -> None:
    pg.get_by_label("Opponent").select_option(opponent)
    box = pg.locator("#play").get_by_label("One hand only")
    if box.is_checked() != hand_only:
        box.click()
    with pg.expect_response("**/api/games"):
        pg.get_by_role("button", name="Start a new game").click()
    settle(pg)


def press(pg, locator) -> None:
    """Click a button and wait for the server's answer to be drawn."""
    with pg.expect_response("**/actions"):
        locator.click()
    settle(pg)
    assert not pg.inner_text("#error"), pg.inner_text("#error")


def settle(pg) -> None:
    """Wait until the page has drawn the answer to its last request (``<body data-busy="false">``)."""
    pg.wait_for_function("() => document.body.dataset.busy === 'false'")


def button(pg, name: str, exact: bool = False):
    return pg.get_by_role("button", name=name, exact=exact)


def one_move(pg, keyboard: bool = False) -> None:
    """A plain human player: pass on the offer, draw, knock when it may, else shed the highest deadwood card."""
    knock = pg.locator("#knocks button")
    if knock.count():
        if keyboard:  # k, then the card's keys: 'k', 't', 'h' knocks discarding the 10♥
            type_keys(pg, "k" + card_keys(knock.first.get_attribute("data-card")))
        else:
            press(pg, knock.first)
        return
    discards = pg.locator("#hand .group.dead button.playable")
    if discards.count() == 0:
        discards = pg.locator("#hand button.playable")
    if discards.count():
        if keyboard:  # the card's keys, as in the terminal: '7', 'h'
            type_keys(pg, card_keys(discards.last.get_attribute("data-card")))
        else:
            press(pg, discards.last)
        return
    for name, key in (("Pass", "p"), ("Draw from stock", "s")):
        b = button(pg, name, exact=True)
        if b.count():
            if keyboard:
                with pg.expect_response("**/actions"):
                    pg.keyboard.press(key)
                settle(pg)
            else:
                press(pg, b)
            return
    raise AssertionError("no move offered: " + pg.inner_text("#play"))


def card_keys(card: str) -> str:
    """The keys that name a card on the page: 'Th' -> 'th', '7h' -> '7h'."""
    return card.lower()


def type_keys(pg, keys: str) -> None:
    """Press ``keys`` one by one (the last one sends the move) and wait for the answer to be drawn."""
    for k in keys[:-1]:
        pg.keyboard.press(k)
    with pg.expect_response("**/actions"):
        pg.keyboard.press(keys[-1])
    settle(pg)
    assert not pg.inner_text("#error"), pg.inner_text("#error")


def play_until(pg, done: str, keyboard: bool = False, on_turn=None, on_showdown=None) -> int:
    """Play until the button ``done`` ('New game') shows; "Next hand" in between. Returns hands seen."""
    hands = 0
    for _ in range(2000):
        if pg.locator("#showdown").is_visible():
            hands += 1
            if on_showdown:
                on_showdown(hands)
            if button(pg, done, exact=True).count():
                return hands
            if keyboard:
                with pg.expect_response("**/actions"):
                    pg.keyboard.press("n")
                settle(pg)
            else:
                press(pg, button(pg, "Next hand", exact=True))
            continue
        if on_turn:
            on_turn()
        one_move(pg, keyboard)
    raise AssertionError("the game did not end")


def core_results(server, pg) -> tuple[dict, list[dict]]:
    """The finished game's log (from the page's link), replayed on a fresh ``play.Table``: the core's results."""
    href = pg.get_by_role("link", name="Download the log").get_attribute("href")
    log = pg.request.get(server["url"] + href).json()
    rules = play.Rules.from_dict(log["rules"])
    t = play.Table(rules, log["episode"] == "hand", log["seed"], tuple(log["players"]), tuple(log["specs"]))
    infos = []
    for h in log["hands"]:
        for p, a in h["actions"]:
            info = t.step(a)
            if info is not None:
                infos.append(info)
    assert t.finished
    return log, infos


@pytest.mark.parametrize("opponent", ["random", "expert"])
def test_play_a_whole_hand(page, server, screens, opponent):
    new_game(page, opponent, hand_only=True)
    shots = {"n": 0}

    def on_turn():
        if shots["n"] == 0 and page.locator("#knocks button, #hand button.playable").count():
            shoot(page, screens, f"hand-{opponent}-discard")
            shots["n"] += 1

    assert play_until(page, "New game", on_turn=on_turn) == 1
    shoot(page, screens, f"hand-{opponent}-showdown")
    log, infos = core_results(server, page)
    assert len(infos) == 1
    names = ("You", opponent)
    # the showdown in plain words: the core's result said as the page says it
    assert page.inner_text("#showdown .score-line") == plain_score_line(infos[0], names)
    assert page.inner_text("#showdown h2") == f"Hand 1 over: {headline(infos[0], names)}"
    text = page.inner_text("#showdown")
    assert "You's" not in text and "knocker" not in text
    if not infos[0]["void"]:
        assert "Your deadwood: " in text and f"{opponent}'s deadwood: " in text
        assert f"(knock limit {infos[0]['knock_limit']})" in page.inner_text("#showdown h2")
    assert page.inner_text("#results-note") == "Result saved."
    assert log["players"] == ["You", opponent]


@pytest.mark.parametrize("opponent", ["random", "expert"])
def test_play_a_short_game_to_the_end(page, server, screens, opponent):
    new_game(page, opponent, hand_only=False)
    seen = []
    hands = play_until(page, "New game", keyboard=opponent == "random",
                       on_showdown=lambda k: seen.append(page.inner_text("#showdown .score-line")))
    shoot(page, screens, f"game-{opponent}-over")
    log, infos = core_results(server, page)
    assert hands == len(infos) == len(log["hands"])
    assert seen == [plain_score_line(i, ("You", opponent)) for i in infos]
    final = infos[-1]["scores"]
    assert max(final) >= TARGET
    w = 0 if final[0] > final[1] else 1
    assert f"the game, {final[w]} to {final[1 - w]}" in page.inner_text("#showdown")
    # the result went to the results file, which evaluate.py reads
    recs = [json.loads(x) for x in server["results"].read_text().splitlines()]
    assert any(r["seed"] == log["seed"] and r["final_scores"] == final for r in recs)
    # New game starts again
    with page.expect_response("**/api/games"):
        button(page, "New game", exact=True).click()
    page.wait_for_selector("#hand .card")


def test_every_control_is_a_named_button(page):
    for b in page.locator("button:visible").all():
        name = (b.get_attribute("aria-label") or b.inner_text()).strip()
        assert name, b.evaluate("e => e.outerHTML")
    labels = [b.get_attribute("aria-label") or b.inner_text() for b in page.locator("#play-table button:visible").all()]
    assert any(x in ("Pass", "Draw from stock") or x.startswith(("Take ", "Discard ", "Knock, discarding ",
                                                                  "Gin, discarding ")) for x in labels), labels


def test_an_illegal_command_shows_the_reason(page):
    page.keyboard.press("/")
    page.keyboard.type("k 2x")
    with page.expect_response("**/actions"):
        page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#error').textContent.length > 0")
    assert "not a card" in page.inner_text("#error")


def test_knock_buttons_say_gin_or_the_deadwood_left(page, server):
    """Play hands against random until knocking is allowed; each knock button names what it scores,
    checked against the core's deadwood of the hand without that card."""
    new_game(page, "random", hand_only=True)
    for _ in range(3000):
        if page.locator("#knocks button").count():
            break
        if page.locator("#showdown").is_visible():
            new_game(page, "random", hand_only=True)
            continue
        one_move(page)
    else:
        raise AssertionError("no knock was ever allowed")
    held = np.zeros(52, bool)
    held[[parse_card(c.get_attribute("data-card")) for c in page.locator("#hand .card").all()]] = True
    left = deadwood_after_discard(held[None])[0]
    for b in page.locator("#knocks button").all():
        c = parse_card(b.get_attribute("data-card"))
        want = f"Gin, discarding {card_pretty(c)}" if left[c] == 0 else \
            f"Knock, discarding {card_pretty(c)} (deadwood {left[c]})"
        assert b.inner_text() == want and left[c] <= int(page.evaluate("() => game.knock_limit"))


def _records(server) -> list[dict]:
    return [json.loads(x) for x in server["results"].read_text().splitlines()]


def test_throwing_a_game_away_asks_first_and_is_recorded(page, server):
    new_game(page, "random", hand_only=False)
    one_move(page)
    gid = page.evaluate("() => game.id")
    page.dialogs["accept"] = False  # Cancel: the game stays
    button(page, "Start a new game").click()
    assert "Abandon this game" in page.dialogs["seen"][-1]
    assert page.evaluate("() => game.id") == gid and page.locator("#hand .card").count()
    page.dialogs["accept"] = True  # OK: recorded as abandoned, a new game starts
    with page.expect_response("**/api/games"):
        button(page, "Start a new game").click()
    settle(page)
    assert page.evaluate("() => game.id") != gid
    view = page.request.get(server["url"] + f"/api/games/{gid}").json()
    assert view["abandoned"] and view["status"] == "abandoned"
    assert any(r["abandoned"] and r["seed"] == view["seed"] and r["moves"] == view["moves"] for r in _records(server))
    # a reload mid-game: the browser asks (beforeunload) and the page records the game as abandoned
    one_move(page)
    gid = page.evaluate("() => game.id")
    page.reload()
    page.wait_for_selector("#hand .card")
    settle(page)
    deadline = time.time() + 10
    while not page.request.get(server["url"] + f"/api/games/{gid}").json()["abandoned"]:
        assert time.time() < deadline, "the reloaded game was not recorded as abandoned"
        time.sleep(0.1)


def test_a_keyboard_only_hand(page, server, screens):
    """Every move by keys: s/t/p, the card's keys to discard, k + card to knock, n; focus stays on the hand."""
    new_game(page, "simple", hand_only=True)
    page.keyboard.press("?")
    assert page.locator("#help-panel").is_visible() and "yellow ring" in page.inner_text("#help-panel")
    shoot(page, screens, "help")
    page.keyboard.press("Escape")
    assert page.locator("#help-panel").is_hidden()
    moves = 0
    while not page.locator("#showdown").is_visible():
        one_move(page, keyboard=True)
        moves += 1
        if page.locator("#hand button.playable:visible").count():  # your turn to discard: focus on the hand
            assert page.evaluate("() => document.activeElement.closest('#hand') !== null")
    assert moves > 1 and page.inner_text("#showdown h2").startswith("Hand 1 over")
    # a wrong card by keys says why, as the terminal does
    new_game(page, "simple", hand_only=True)
    while not page.locator("#hand button.playable").count():
        one_move(page, keyboard=True)
    for k in "zz":
        page.keyboard.press(k)
    assert "not a card" in page.inner_text("#error")


# ----------------------------------------------------------------------------- watching and replaying

def test_watch_two_bots_to_the_end(page, screens):
    page.get_by_role("button", name="Watch bots").click()
    page.get_by_label("Bot A").select_option("expert")
    page.get_by_label("Bot B").select_option("simple")
    page.get_by_role("button", name="Start watching").click()
    page.wait_for_selector("#watch-frame .seat")
    # Paused at the normal speed (a move every 0.5 s): at the fastest speed the game could end (and
    # disable the controls) while the screenshots are taken on a loaded machine.
    page.wait_for_selector("#watch-frame .prompt.move")
    button(page, "Pause").click()
    page.wait_for_function("() => document.body.dataset.stepping !== 'true'")  # a move asked for before the pause
    shoot(page, screens, "watch-move")
    before = page.inner_text("#watch-frame")
    page.wait_for_timeout(400)
    assert page.inner_text("#watch-frame") == before  # paused: nothing moves
    with page.expect_response("**/step"):
        button(page, "Step one move").click()
    page.wait_for_function("b => document.querySelector('#watch-frame').innerText !== b", arg=before)
    page.get_by_label("Speed").fill("4")  # fastest, to the end
    assert page.inner_text("#watch-speed-text") == "fastest"
    button(page, "Resume").click()
    page.wait_for_selector("#watch-frame .showdown", timeout=120000)
    # No pause here: if this showdown ended the game, the page has already disabled its controls
    # (pausing is checked above). A showdown stays up for at least 1.5 s, long enough to shoot.
    shoot(page, screens, "watch-showdown")
    page.wait_for_selector("text=The game is over.", timeout=180000)
    assert button(page, "Step one move").is_disabled()
    assert page.locator("#watch-frame .error").count() == 0  # it ended, not an error


def test_replay_a_log_forwards_and_backwards(page, server, screens, tmp_path):
    new_game(page, "expert", hand_only=True)
    play_until(page, "New game")
    log, infos = core_results(server, page)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(log))
    page.get_by_role("button", name="Replay a log").click()
    page.get_by_label("Open a").set_input_files(str(path))
    n = log["moves"]
    page.wait_for_selector(f"text=Move 0 of {n}")
    assert button(page, "Back one move").is_disabled()
    button(page, "Forward one move").click()
    page.wait_for_selector(f"text=Move 1 of {n}")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(f"text=Move 2 of {n}")
    shoot(page, screens, "replay-move")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f"text=Move 1 of {n}")
    button(page, "Last move").click()
    page.wait_for_selector(f"text=Move {n} of {n}")
    assert page.inner_text("#replay-frame .score-line") == plain_score_line(infos[-1], tuple(log["players"]))
    shoot(page, screens, "replay-end")
    # a file that is not a log says so
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    page.get_by_label("Open a").set_input_files(str(bad))
    page.wait_for_function("() => document.querySelector('#replay-error').textContent.length > 0")
    assert "not a valid okgin game log" in page.inner_text("#replay-error")


@pytest.mark.skipif(not os.environ.get("OKGIN_DOCS_SCREENSHOT"), reason="set OKGIN_DOCS_SCREENSHOT=1 to rewrite it")
def test_the_docs_screenshot_position_is_reached(browser, tmp_path):
    """The position of docs/play_web.png (the README's command, a game to 100 against the expert, at a
    discard with a meld on show) is reached and pictured; the picture goes to ``OKGIN_SCREENSHOT`` when
    set (``OKGIN_SCREENSHOT=docs/play_web.png pytest -k screenshot`` refreshes the docs' picture), else
    to a temporary file: the tests never write into the checkout."""
    url, _, srv, thread = start_server(WebConfig(opponent="expert", results=str(tmp_path / "r.jsonl")))
    try:
        pg = browser.new_page(viewport=LAPTOP)
        pg.goto(url + "/")
        pg.wait_for_selector("#hand .card")
        settle(pg)
        for _ in range(200):  # to the third discard of a hand with a meld, so that the picture shows one
            one_move(pg)
            if pg.locator("#hand button.playable").count() and pg.locator("#hand .meld").count() \
                    and pg.locator("#opp-moves").inner_text():
                break
            if pg.locator("#showdown").is_visible():
                press(pg, button(pg, "Next hand", exact=True))
        assert pg.locator("#hand button.playable").count() and pg.locator("#hand .meld").count()
        out = Path(os.environ.get("OKGIN_SCREENSHOT") or tmp_path / "play_web.png")
        pg.screenshot(path=str(out))
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        pg.close()
    finally:
        srv.should_exit = True
        thread.join(10)
