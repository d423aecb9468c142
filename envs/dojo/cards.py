"""The Nebbia del Dojo deck: 22 cards of 13 kinds. Cards are stored by kind index."""

from __future__ import annotations

KIAI, UKE, KAESHI, TSUGI_ASHI, TUNNEL_SEGRETO, IRIMI, SFIDA_CARD, SENSEI, PESO, INTENSIVO, COLPO, \
    PASSO_FALSO_CARD, MEDITAZIONE = range(13)

CARD_NAMES = (
    "Kiai", "Uke", "Kaeshi", "Tsugi-ashi", "Tunnel Segreto", "Irimi", "Sfida", "Il Sensei Osserva",
    "Il Peso della Cintura", "Allenamento Intensivo", "Colpo Proibito", "Passo Falso", "Meditazione",
)
CARD_COUNTS = (3, 2, 2, 2, 1, 2, 2, 1, 1, 2, 1, 2, 1)
NUM_KINDS = len(CARD_COUNTS)
DECK_SIZE = sum(CARD_COUNTS)  # 22
TECNICA = (KIAI, UKE, KAESHI)
IS_TECNICA = tuple(k in TECNICA for k in range(NUM_KINDS))

