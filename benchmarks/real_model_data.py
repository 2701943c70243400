# ruff: noqa: E501
"""The inputs and right answers `real_model.py` asks the real model about.

Three signatures of different shapes, 20 inputs each, written for this benchmark: a label
(the sentiment of a product review), a nested extraction (a contact with an optional age
and a nested company), and a list of objects (the items of an order).
"""

from __future__ import annotations

from typing import Any

REVIEWS: list[tuple[str, str]] = [
    ("The battery died after two days and support never answered my emails.", "negative"),
    ("Great value for the price, works perfectly out of the box.", "positive"),
    ("Arrived broken and the refund took six weeks.", "negative"),
    ("My kids love it; we use it every evening.", "positive"),
    ("The strap snapped the first time I wore it.", "negative"),
    ("Setup took two minutes and the sound is crisp and loud.", "positive"),
    ("It overheats so badly that I can't hold it for more than a minute.", "negative"),
    ("Exactly as described, and the seller shipped it a day early.", "positive"),
    ("The app crashes every time I try to pair the device.", "negative"),
    ("Comfortable, light, and the fabric still looks new after many washes.", "positive"),
    ("Smells of chemicals and gave me a headache.", "negative"),
    ("Best purchase I made this year, I already ordered a second one.", "positive"),
    ("The lid doesn't close and the coffee leaks into my bag.", "negative"),
    ("Fast charging really works: full in under an hour.", "positive"),
    ("The colours faded after one wash and the seams came apart.", "negative"),
    ("Sturdy, easy to clean, and it looks great in the kitchen.", "positive"),
    ("Instructions were missing and two screws were not in the box.", "negative"),
    ("The camera takes sharp photos even at night.", "positive"),
    ("Stopped working after a week and the warranty was refused.", "negative"),
    ("Quiet, powerful, and the filter is simple to replace.", "positive"),
]

#: (text, {"name", "email", "age" (None when not stated), "company": {"name", "city"}})
CONTACTS: list[tuple[str, dict[str, Any]]] = [
    (
        "Hi, I'm Maria Lopez, 34, product lead at Brightwave in Madrid. Reach me at maria.lopez@brightwave.io.",
        {
            "name": "Maria Lopez",
            "email": "maria.lopez@brightwave.io",
            "age": 34,
            "company": {"name": "Brightwave", "city": "Madrid"},
        },
    ),
    (
        "Contact: Tom Becker <tom.becker@nordlicht.de>, Nordlicht GmbH, Hamburg.",
        {
            "name": "Tom Becker",
            "email": "tom.becker@nordlicht.de",
            "age": None,
            "company": {"name": "Nordlicht GmbH", "city": "Hamburg"},
        },
    ),
    (
        "Aiko Tanaka (29) works for Sakura Labs in Osaka; email aiko@sakuralabs.jp.",
        {
            "name": "Aiko Tanaka",
            "email": "aiko@sakuralabs.jp",
            "age": 29,
            "company": {"name": "Sakura Labs", "city": "Osaka"},
        },
    ),
    (
        "Please send the contract to James O'Neill at jon@harbourfreight.ie. He is with Harbour Freight, Dublin.",
        {
            "name": "James O'Neill",
            "email": "jon@harbourfreight.ie",
            "age": None,
            "company": {"name": "Harbour Freight", "city": "Dublin"},
        },
    ),
    (
        "Signed, Priya Raman, 41 years old, CTO of Lotus Analytics (Bangalore). priya.raman@lotusanalytics.in",
        {
            "name": "Priya Raman",
            "email": "priya.raman@lotusanalytics.in",
            "age": 41,
            "company": {"name": "Lotus Analytics", "city": "Bangalore"},
        },
    ),
    (
        "You can write to Lucas Martin, lucas.martin@verdance.fr, at Verdance in Lyon.",
        {
            "name": "Lucas Martin",
            "email": "lucas.martin@verdance.fr",
            "age": None,
            "company": {"name": "Verdance", "city": "Lyon"},
        },
    ),
    (
        "Meet Sofia Rossi, a 27-year-old engineer at Ponte Systems, Milan. Her address: s.rossi@pontesystems.it",
        {
            "name": "Sofia Rossi",
            "email": "s.rossi@pontesystems.it",
            "age": 27,
            "company": {"name": "Ponte Systems", "city": "Milan"},
        },
    ),
    (
        "From: Daniel Kim <dkim@bluepeak.kr> (Bluepeak, Seoul)",
        {
            "name": "Daniel Kim",
            "email": "dkim@bluepeak.kr",
            "age": None,
            "company": {"name": "Bluepeak", "city": "Seoul"},
        },
    ),
    (
        "Our new partner manager is Emma Wilson, 38, from Kestrel Media in Manchester - emma@kestrelmedia.co.uk.",
        {
            "name": "Emma Wilson",
            "email": "emma@kestrelmedia.co.uk",
            "age": 38,
            "company": {"name": "Kestrel Media", "city": "Manchester"},
        },
    ),
    (
        "Questions go to Omar Haddad (omar.haddad@cedarworks.lb), Cedarworks, Beirut.",
        {
            "name": "Omar Haddad",
            "email": "omar.haddad@cedarworks.lb",
            "age": None,
            "company": {"name": "Cedarworks", "city": "Beirut"},
        },
    ),
    (
        "Anna Novak is 52 and runs Vltava Design in Prague. Email: anna@vltavadesign.cz",
        {
            "name": "Anna Novak",
            "email": "anna@vltavadesign.cz",
            "age": 52,
            "company": {"name": "Vltava Design", "city": "Prague"},
        },
    ),
    (
        "Reply to Carlos Mendes at carlos.mendes@atlantico.pt; he's at Atlantico Foods in Lisbon.",
        {
            "name": "Carlos Mendes",
            "email": "carlos.mendes@atlantico.pt",
            "age": None,
            "company": {"name": "Atlantico Foods", "city": "Lisbon"},
        },
    ),
    (
        "Li Wei, 45, head of research, Jade River Biotech, Shanghai, liwei@jaderiver.cn",
        {
            "name": "Li Wei",
            "email": "liwei@jaderiver.cn",
            "age": 45,
            "company": {"name": "Jade River Biotech", "city": "Shanghai"},
        },
    ),
    (
        "The invoice contact is Hannah Berg (hannah.berg@fjordtech.no) at Fjordtech, Bergen.",
        {
            "name": "Hannah Berg",
            "email": "hannah.berg@fjordtech.no",
            "age": None,
            "company": {"name": "Fjordtech", "city": "Bergen"},
        },
    ),
    (
        "I'm Kwame Mensah, 31, founder of Gold Coast Solar in Accra; kwame@goldcoastsolar.com",
        {
            "name": "Kwame Mensah",
            "email": "kwame@goldcoastsolar.com",
            "age": 31,
            "company": {"name": "Gold Coast Solar", "city": "Accra"},
        },
    ),
    (
        "Speaker: Elena Petrova, Polar Robotics (Helsinki), elena.petrova@polarrobotics.fi",
        {
            "name": "Elena Petrova",
            "email": "elena.petrova@polarrobotics.fi",
            "age": None,
            "company": {"name": "Polar Robotics", "city": "Helsinki"},
        },
    ),
    (
        "Noah Fischer, age 23, intern at Alpenblick AG, Zurich. noah.fischer@alpenblick.ch",
        {
            "name": "Noah Fischer",
            "email": "noah.fischer@alpenblick.ch",
            "age": 23,
            "company": {"name": "Alpenblick AG", "city": "Zurich"},
        },
    ),
    (
        "For support, email Grace Okafor (grace@lagoonpay.ng) of LagoonPay in Lagos.",
        {
            "name": "Grace Okafor",
            "email": "grace@lagoonpay.ng",
            "age": None,
            "company": {"name": "LagoonPay", "city": "Lagos"},
        },
    ),
    (
        "Isabel Cruz, 36, Sierra Outdoor, Denver - isabel.cruz@sierraoutdoor.com",
        {
            "name": "Isabel Cruz",
            "email": "isabel.cruz@sierraoutdoor.com",
            "age": 36,
            "company": {"name": "Sierra Outdoor", "city": "Denver"},
        },
    ),
    (
        "Talk to Mateo Silva from Andes Coffee in Bogota; his email is mateo@andescoffee.co.",
        {
            "name": "Mateo Silva",
            "email": "mateo@andescoffee.co",
            "age": None,
            "company": {"name": "Andes Coffee", "city": "Bogota"},
        },
    ),
]

#: (order text, [{"name", "quantity"}]) with names in the order the text gives them.
ORDERS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "Please send 3 apples and 2 bananas.",
        [{"name": "apples", "quantity": 3}, {"name": "bananas", "quantity": 2}],
    ),
    (
        "I'd like 1 notebook, 4 pencils and 2 erasers.",
        [
            {"name": "notebook", "quantity": 1},
            {"name": "pencils", "quantity": 4},
            {"name": "erasers", "quantity": 2},
        ],
    ),
    (
        "Order: 6 eggs, 1 loaf of bread.",
        [{"name": "eggs", "quantity": 6}, {"name": "loaf of bread", "quantity": 1}],
    ),
    (
        "We need 10 chairs and 2 tables for the office.",
        [{"name": "chairs", "quantity": 10}, {"name": "tables", "quantity": 2}],
    ),
    (
        "Two coffees and three croissants, please.",
        [{"name": "coffees", "quantity": 2}, {"name": "croissants", "quantity": 3}],
    ),
    (
        "Add 5 tomatoes, 1 cucumber and 2 onions to my basket.",
        [
            {"name": "tomatoes", "quantity": 5},
            {"name": "cucumber", "quantity": 1},
            {"name": "onions", "quantity": 2},
        ],
    ),
    ("Ship 12 light bulbs.", [{"name": "light bulbs", "quantity": 12}]),
    (
        "Can I get 2 pizzas and 4 sodas?",
        [{"name": "pizzas", "quantity": 2}, {"name": "sodas", "quantity": 4}],
    ),
    (
        "I want 3 shirts and 1 jacket.",
        [{"name": "shirts", "quantity": 3}, {"name": "jacket", "quantity": 1}],
    ),
    (
        "Restock 20 mugs, 15 plates and 30 spoons.",
        [
            {"name": "mugs", "quantity": 20},
            {"name": "plates", "quantity": 15},
            {"name": "spoons", "quantity": 30},
        ],
    ),
    (
        "One laptop charger and two USB cables.",
        [{"name": "laptop charger", "quantity": 1}, {"name": "USB cables", "quantity": 2}],
    ),
    (
        "Please deliver 8 bottles of water and 2 bags of ice.",
        [{"name": "bottles of water", "quantity": 8}, {"name": "bags of ice", "quantity": 2}],
    ),
    ("Get me 4 tires.", [{"name": "tires", "quantity": 4}]),
    (
        "I need 7 folders and 3 staplers.",
        [{"name": "folders", "quantity": 7}, {"name": "staplers", "quantity": 3}],
    ),
    (
        "For the party: 5 balloons, 2 cakes and 10 candles.",
        [
            {"name": "balloons", "quantity": 5},
            {"name": "cakes", "quantity": 2},
            {"name": "candles", "quantity": 10},
        ],
    ),
    ("Order 9 towels.", [{"name": "towels", "quantity": 9}]),
    (
        "Three lemons and one watermelon, thanks.",
        [{"name": "lemons", "quantity": 3}, {"name": "watermelon", "quantity": 1}],
    ),
    (
        "We'd like 2 tents and 4 sleeping bags.",
        [{"name": "tents", "quantity": 2}, {"name": "sleeping bags", "quantity": 4}],
    ),
    (
        "Send 11 roses and 1 vase.",
        [{"name": "roses", "quantity": 11}, {"name": "vase", "quantity": 1}],
    ),
    (
        "I'll take 6 donuts and 2 teas.",
        [{"name": "donuts", "quantity": 6}, {"name": "teas", "quantity": 2}],
    ),
]
