"""The sandbox's dictionary: entries by id under one lock, seeded with realistic terms.

Entry ``n`` always gets the same terms, so tests and notebooks can name them.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable, Mapping
from itertools import zip_longest
from typing import Any

from ..models import Entry

# Each table: ``[fromLang>toLang]`` then ``source|target`` pairs, each ending with ``;``.
_TABLES = """
    [ja>en] 金曜日|FRI; 会議|meeting; 請求書|invoice; 見積書|quotation; 納品書|delivery note;
    契約書|contract; 領収書|receipt; 株式会社|Co., Ltd.; 取締役|director; 代表取締役|CEO;
    営業部|Sales Department; 経理部|Accounting Department; 人事部|Human Resources; 月曜日|MON;
    火曜日|TUE; 水曜日|WED; 木曜日|THU; 土曜日|SAT; 日曜日|SUN; 稟議書|approval request;
    議事録|minutes; 締め切り|deadline; 納期|delivery date; 発注書|purchase order; 在庫|inventory;
    出荷|shipment; 保守|maintenance; 障害|incident; 仕様書|specification; 顧客|customer;
    取引先|business partner; 決算|financial results;
    [en>de] invoice|Rechnung; meeting|Besprechung; delivery note|Lieferschein;
    purchase order|Bestellung; contract|Vertrag; receipt|Quittung; deadline|Frist; customer|Kunde;
    supplier|Lieferant; warehouse|Lager; shipment|Sendung; board of directors|Vorstand;
    annual report|Geschäftsbericht; turnover|Umsatz; VAT|Mehrwertsteuer; employee|Mitarbeiter;
    department|Abteilung; headquarters|Hauptsitz; user manual|Bedienungsanleitung;
    warranty|Gewährleistung; spare part|Ersatzteil; maintenance|Wartung; terms and conditions|AGB;
    privacy policy|Datenschutzerklärung; appointment|Termin; sales|Vertrieb; procurement|Einkauf;
    accounting|Buchhaltung; trade fair|Messe; limited company|GmbH; share|Aktie;
    [zh-CN>en] 人工智能|artificial intelligence; 机器翻译|machine translation; 术语表|glossary;
    用户词典|user dictionary; 客户服务|customer service; 供应链|supply chain; 市场营销|marketing;
    财务报表|financial statements; 董事会|board of directors; 股东|shareholder; 合同|contract;
    发票|invoice; 报价单|quotation; 订单|order; 物流|logistics; 仓库|warehouse;
    质量控制|quality control; 研发|R&D; 专利|patent; 商标|trademark; 有限公司|Co., Ltd.;
    总经理|general manager; 项目经理|project manager; 截止日期|deadline; 预算|budget; 税务|taxation;
    会计|accounting; 审计|audit; 云计算|cloud computing; 数据库|database; 服务器|server;
    网络安全|cybersecurity;
    [de>en] Straße|street; Kündigung|termination; Führerschein|driving licence; Größe|size;
    Gebühr|fee; Zulassung|registration; Überweisung|bank transfer; Rechnungsstellung|invoicing;
    Lastschrift|direct debit; Steuernummer|tax number; Geschäftsführer|managing director;
    Prokurist|authorised signatory; Handelsregister|commercial register;
    Werkvertrag|contract for work; Mängelrüge|notice of defects; Gewerbeschein|trade licence;
    Krankenkasse|health insurance fund; Bürgschaft|guarantee; Abmahnung|formal warning;
    Gesellschafter|partner; Umsatzsteuer|sales tax; Fälligkeit|due date; Zahlungsziel|payment term;
    Auftragsbestätigung|order confirmation; Lieferverzug|delivery delay; Betriebsrat|works council;
    Kurzarbeit|short-time work; Übersetzung|translation; Wörterbuch|dictionary;
    Fachbegriff|technical term; Ansprechpartner|contact person; Öffnungszeiten|opening hours;
    [en>fr] invoice|facture; quotation|devis; purchase order|bon de commande;
    delivery note|bon de livraison; contract|contrat; deadline|date limite; meeting|réunion;
    minutes|compte rendu; customer|client; supplier|fournisseur; warehouse|entrepôt;
    shipping|expédition; tax|taxe; VAT|TVA; headquarters|siège social; limited company|SARL;
    managing director|directeur général; human resources|ressources humaines;
    accounting|comptabilité; payroll|paie; user dictionary|dictionnaire utilisateur;
    translation memory|mémoire de traduction; glossary|glossaire; release note|note de version;
    bug report|rapport de bogue; software|logiciel; download|télécharger; email|courriel;
    computer|ordinateur; keyboard|clavier; password|mot de passe;
    [fr>en] société anonyme|public limited company; chiffre d'affaires|turnover; bénéfice|profit;
    actionnaire|shareholder; conseil d'administration|board of directors; bilan|balance sheet;
    échéance|due date; acompte|deposit; reçu|receipt; garantie|warranty; pièce détachée|spare part;
    mode d'emploi|user manual; sécurité sociale|social security; congé payé|paid leave;
    arrêt maladie|sick leave; télétravail|remote work; prud'hommes|labour court; huissier|bailiff;
    notaire|notary; mairie|town hall; préfecture|prefecture; carte grise|vehicle registration;
    permis de conduire|driving licence; vendredi|FRI; lundi|MON; été|summer; hôpital|hospital;
    cœur|heart; garçon|boy; façade|front;
    [ko>en] 회의|meeting; 계약서|contract; 견적서|quotation; 세금계산서|tax invoice; 주식회사|Inc.;
    대표이사|CEO; 거래처|client; 납기|delivery date; 재고|inventory; 출장|business trip; 금요일|FRI;
    월요일|MON; 번역|translation; 사전|dictionary; 용어집|glossary; 고객|customer; 영수증|receipt;
    주문서|order form; 발주|purchase order; 결재|approval; 보고서|report; 예산|budget;
    인사팀|HR team; 영업팀|sales team; 회계|accounting; 감사|audit; 특허|patent; 상표|trademark;
    서버|server; 보안|security;
    [en>ja] dictionary|辞書; translation|翻訳; invoice|請求書; meeting|打ち合わせ; deadline|締切;
    customer|お客様; server|サーバー; database|データベース; password|パスワード; settings|設定;
    download|ダウンロード; update|更新; delete|削除; save|保存; cancel|キャンセル; error|エラー;
    warning|警告; user|ユーザー; account|アカウント; login|ログイン; logout|ログアウト; search|検索;
    help|ヘルプ; file|ファイル; folder|フォルダー; print|印刷; share|共有; notification|通知;
    schedule|予定; approval|承認; report|報告書; budget|予算;
    [es>en] factura|invoice; presupuesto|quote; pedido|order; albarán|delivery note;
    contrato|contract; reunión|meeting; plazo|deadline; cliente|customer; proveedor|supplier;
    almacén|warehouse; envío|shipment; impuesto|tax; IVA|VAT; sede central|headquarters;
    sociedad anónima|public limited company; gerente|manager; recursos humanos|human resources;
    contabilidad|accounting; nómina|payroll; año|year; niño|child; señal|signal; mañana|morning;
    España|Spain; viernes|FRI; lunes|MON; traducción|translation; diccionario|dictionary;
    glosario|glossary; contraseña|password;
"""


def _table(block: str) -> list[tuple[str, str, str, str]]:
    langs, text = block.split("]")
    source, target = langs.split(">")
    pairs = (item.strip().split("|") for item in text.split(";")[:-1])
    return [(source, a, target, b) for a, b in pairs]


_ROWS = zip_longest(*map(_table, _TABLES.split("[")[1:]))
BASE_TERMS: tuple[tuple[str, str, str, str], ...] = tuple(t for row in _ROWS for t in row if t)
"""(fromLang, fromText, toLang, toText), the pairs interleaved: entry 1 is ``金曜日 -> FRI``."""


def _is_number(entry_id: str) -> bool:
    return entry_id.isascii() and entry_id.isdigit() and str(int(entry_id)) == entry_id != "0"


def wire_id(entry_id: str, ids: str = "integer") -> int | str:
    """The id as the listing's JSON carries it (``"007"`` stays text: it is not entry 7)."""
    return int(entry_id) if ids == "integer" and _is_number(entry_id) else entry_id


def id_sort_key(entry_id: str) -> tuple[int, int, str]:
    """Numbers first, in numeric order; then every other id in text order."""
    return (0, int(entry_id), "") if _is_number(entry_id) else (1, 0, entry_id)


def generated_entry(entry_id: str) -> Entry:
    """The sandbox's terms for ``entry_id``: the same id always gets the same terms."""
    if _is_number(entry_id):
        lap, slot = divmod(int(entry_id) - 1, len(BASE_TERMS))
        suffix = f" {lap + 1}" if lap else ""
    else:
        slot = zlib.crc32(entry_id.encode("utf-8", "surrogatepass")) % len(BASE_TERMS)
        suffix = f" ({entry_id})"
    from_lang, from_text, to_lang, to_text = BASE_TERMS[slot]
    return Entry(entry_id, from_lang, from_text + suffix, to_lang, to_text + suffix)


def coerce_entries(spec: int | Iterable[str | Entry | Mapping[str, Any]]) -> list[Entry]:
    """Entries from a count, ids, ``Entry`` objects, or mappings in the service's names."""
    if isinstance(spec, int):
        return [generated_entry(str(i)) for i in range(1, spec + 1)]
    entries = [Entry.from_service(dict(e)) if isinstance(e, Mapping) else e for e in spec]
    return [e if isinstance(e, Entry) else generated_entry(str(e)) for e in entries]


class EntryStore:
    """What the sandbox holds. New ids are never reused, as a database sequence's are not."""

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._high = 0
        self.put(entries)

    def snapshot(self) -> dict[str, Entry]:
        with self._lock:
            return dict(self._entries)

    def put(self, entries: Iterable[Entry]) -> None:
        """Add (or replace) entries under their own ids."""
        with self._lock:
            for entry in entries:
                self._entries[entry.id] = entry
                if _is_number(entry.id):
                    self._high = max(self._high, int(entry.id))

    def add(self, terms: list[tuple[str, str, str, str]]) -> list[Entry]:
        """New entries with new ids, all at once (a bulk add is all or nothing)."""
        with self._lock:
            added = [Entry(str(self._high + n), *item) for n, item in enumerate(terms, 1)]
            self._high += len(added)
            self._entries.update((entry.id, entry) for entry in added)
            return added

    def replace(self, entry_id: str, terms: tuple[str, str, str, str]) -> Entry | None:
        """New terms under an existing id; ``None`` when there is no such entry."""
        with self._lock:
            if entry_id in self._entries:
                self._entries[entry_id] = Entry(entry_id, *terms)
            return self._entries.get(entry_id)

    def delete(self, entry_id: str) -> Entry | None:
        with self._lock:
            return self._entries.pop(entry_id, None)

    def purge(self) -> int:
        with self._lock:
            count, self._entries = len(self._entries), {}
            return count

    def sorted(self) -> list[Entry]:
        """Every entry in id order (numbers numerically)."""
        with self._lock:
            entries = list(self._entries.values())
        return sorted(entries, key=lambda e: id_sort_key(e.id))
