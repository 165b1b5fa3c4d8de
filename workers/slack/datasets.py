"""The data sets and corpora a slash command names: their training split, tokens and own sequence length.

Public data sets by name, their training split: "imagenet" is ILSVRC-2012's 1,281,167 images (Russakovsky
et al. 2015), "cifar10" / "cifar100" 50,000 images of 32 x 32 (Krizhevsky 2009; an image preset is sized at that
input, except ViT-B/16, which reads them resized to its 224), "svhn" 73,257 of 32 x 32 (Netzer et al. 2011;
likewise), "mnist" and "fashion-mnist" 60,000 (LeCun et al. 1998; Xiao et al. 2017), "celeba" 202,599 faces (Liu
et al. 2015; a DCGAN reads them resized to its 64 x 64), "squad" 87,599 questions (SQuAD v1.1, Rajpurkar et al.
2016), "imdb" 25,000 reviews (Maas et al. 2011), "sst2" 67,349 and "mnli" 392,702 sentence pairs (GLUE, Wang et
al. 2018), "alpaca" 52,002 instructions (tatsu-lab/alpaca's alpaca_data.json; its card says 52K) and "dolly"
15,011 (databricks-dolly-15k as it stands after its cleaning commits; 15,014 in TFDS's older copy), "gsm8k" 7,473
grade-school math problems (GSM8K's train split, Cobbe et al. 2021; num_examples of its public Hub copies); MNLI,
SST-2, CelebA, Alpaca, Dolly and GSM8K were read in public copies on 2026-12-06, the other counts are recalled. A
count the user gives wins; a text set sets no sequence length, except where its own script truncates (DATASET_SEQ:
Alpaca's 512, SQuAD's 384, IMDb's 512, read in public copies of the scripts and guides on 2026-12-06), and where its
recipe sets epochs (DATASET_EPOCHS: SQuAD's 2, read 2026-12-07). Summarization sets (2026-12-07), recalled:
"cnn-dailymail" 287,113 articles (See et al. 2017, version 3.0.0's train split), "xsum" 204,045 (Narayan et al. 2018),
"samsum" 14,732 dialogues (Gliwa et al. 2019).
"""

from __future__ import annotations

# name -> (training samples, image input or None)
DATASETS: dict[str, tuple[int, tuple[int, int, int] | None]] = {
    "imagenet": (1_281_167, None), "imagenet-1k": (1_281_167, None), "ilsvrc": (1_281_167, None),
    "cifar10": (50_000, (3, 32, 32)), "cifar-10": (50_000, (3, 32, 32)),
    "cifar100": (50_000, (3, 32, 32)), "cifar-100": (50_000, (3, 32, 32)),
    "svhn": (73_257, (3, 32, 32)),
    "mnist": (60_000, None), "fashion-mnist": (60_000, None), "fashionmnist": (60_000, None),
    "celeba": (202_599, None),
    "squad": (87_599, None), "squad-v2": (130_319, None),  # SQuAD 2.0's training questions: recalled
    "imdb": (25_000, None), "sst2": (67_349, None), "sst-2": (67_349, None),
    "mnli": (392_702, None), "multinli": (392_702, None),
    "alpaca": (52_002, None), "dolly": (15_011, None), "dolly-15k": (15_011, None),
    "databricks-dolly-15k": (15_011, None), "gsm8k": (7_473, None),
    "coco": (118_287, None), "mscoco": (118_287, None),  # COCO 2017's train2017 images (Lin et al. 2014), recalled
    # GLUE's eight tasks' training sets as BERT fine-tuned them, WNLI left out (Wang et al. 2018): MNLI 392,702, QQP
    # 363,846, QNLI 104,743, SST-2 67,349, CoLA 8,551, STS-B 5,749, MRPC 3,668, RTE 2,490; recalled but MNLI and SST-2
    "glue": (949_098, None),
    **dict.fromkeys(("cnn-dailymail", "cnn_dailymail", "cnn/dailymail", "cnndm"), (287_113, None)),
    "xsum": (204_045, None), "samsum": (14_732, None),
    "ffhq": (70_000, None),  # Flickr-Faces-HQ, 70,000 faces at 1024 x 1024 (Karras et al. 2019), recalled
    # ImageNet's full release (fall 2011), 14,197,122 images of 21,841 classes, as ViT pre-trained on it; recalled
    "imagenet-21k": (14_197_122, None), "imagenet21k": (14_197_122, None), "in21k": (14_197_122, None),
}
DATASET_ALIASES = {"imagenet-1k": "imagenet", "ilsvrc": "imagenet"}  # a recipe names its data set once
# A text corpus named for pre-training: its training tokens, made samples by the sequence as "9B tokens" would be.
# OpenWebText: train.bin's 9,035,582,198 GPT-2 tokens (karpathy/nanoGPT data/openwebtext/prepare.py, read 2026-12-06).
# BERT's corpora as its paper counts them (Devlin et al. 2019 §3.1: "BooksCorpus (800M words) ... and English
# Wikipedia (2,500M words)"), made tokens by workers/slack/corpus.py's 4 tokens to 3 words.
_WIKI = (3_333_333_333, "English Wikipedia's 2,500M words as BERT's paper counts them, 4 tokens to 3 words")
_BOOKS = (1_066_666_667, "BooksCorpus's 800M words as BERT's paper counts them, 4 tokens to 3 words")
TOKEN_SETS = {"openwebtext": (9_035_582_198, "OpenWebText's train split in GPT-2 tokens, nanoGPT's prepare.py"),
              "owt": (9_035_582_198, "OpenWebText's train split in GPT-2 tokens, nanoGPT's prepare.py"),
              "wikipedia": _WIKI, "enwiki": _WIKI, "bookcorpus": _BOOKS, "bookscorpus": _BOOKS,
              # tiny Shakespeare's train.bin in GPT-2 tokens (karpathy/nanoGPT data/shakespeare/prepare.py: "train.bin
              # has 301,966 tokens"), recalled
              "shakespeare": (301_966, "tiny Shakespeare's train split in GPT-2 tokens, nanoGPT's prepare.py")}
# A set whose own training script truncates its samples: the tokens each is sized at where seq= is not said.
# Stanford Alpaca's train.py (tatsu-lab/stanford_alpaca, read 2026-12-06): model_max_length 512, padded to the
# longest in a batch, so 512 is the most a sample costs.
DATASET_SEQ = {"alpaca": (512, "Stanford Alpaca's train.py truncates at model_max_length 512"),
               **dict.fromkeys(("squad", "squad-v2"), (384, "google-research/bert run_squad.py's max_seq_length 384")),
               # reviews of 230 words on average: GLUE's 128 would cut most; the guide truncates at the model's limit
               "imdb": (512, "transformers' text classification guide (DistilBERT on IMDb) truncates at the model's "
                             "512")}
# A set whose own recipe trains a given number of epochs: told back where no epochs are said. SQuAD v1.1: the
# google-research/bert README's run_squad.py runs (BERT-Base and BERT-Large) --num_train_epochs=2.0 (read 2026-12-07)
DATASET_EPOCHS = dict.fromkeys(("squad", "squad-v2"),
                               (2, "google-research/bert run_squad.py's --num_train_epochs=2.0"))
