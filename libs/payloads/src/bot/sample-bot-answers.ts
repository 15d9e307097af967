import type { MsgType } from './bot-message.dto';

/**
 * One valid task-push answer per msgType, filling every field the seed lists, for the validator's unit
 * spec and the end-to-end round trips.
 */
export const SAMPLE_TASK_PUSH_ANSWERS: Readonly<Record<MsgType, Record<string, unknown>>> = {
  plain: {
    resCode: 0,
    resError: '',
    message: { msgType: 'plain', msgContent: 'Your order has shipped.' },
    variables: { orderState: 'shipped' },
    toTaskNodeId: 12,
    routeType: 1,
    command: 'next',
  },
  rich: {
    resCode: 0,
    message: { msgType: 'rich', msgContent: '<p>Your order <b>has shipped</b>.</p>' },
    routeType: 2,
  },
  selective_table: {
    resCode: 0,
    message: {
      msgType: 'selective_table',
      msgContent: {
        title: 'Pick a size',
        rowNumber: 1,
        columnNumber: 2,
        optionList: [
          { id: 's', value: 'Small' },
          { id: 'l', value: 'Large' },
        ],
      },
    },
  },
  selective_list: {
    resCode: 0,
    message: { msgType: 'selective_list', msgContent: { title: 'Pick a topic', optionList: [{ id: '1', value: 'Billing' }] } },
    variables: {},
  },
  show_product: {
    resCode: 0,
    message: {
      msgType: 'show_product',
      msgContent: {
        title: 'Our picks',
        showSize: 2,
        turnFlag: 1,
        productList: [
          {
            id: 7,
            name: 'Kettle',
            image: 'https://shop.example.com/kettle.png',
            url: 'https://shop.example.com/kettle',
            infoList: [{ info: '1.7 l', boldFlag: '1', url: 0, color: '#333333' }],
          },
        ],
      },
    },
  },
  selective_product: {
    resCode: 0,
    message: {
      msgType: 'selective_product',
      msgContent: { title: 'Choose one', showSize: 1, turnFlag: 0, productList: [{ id: 8, name: 'Toaster', image: '', url: '', infoList: [] }] },
    },
  },
  custom_card: {
    resCode: 0,
    message: {
      msgType: 'custom_card',
      msgContent: {
        id: 3,
        name: 'help',
        turnFlag: 1,
        showSize: 2,
        title: 'How can we help?',
        cardList: [
          { id: 1, type: 1, isHit: 1, hitType: 1, hitContent: 'https://help.example.com', content: '<p>Help centre</p>' },
          { id: 2, type: 1, isHit: 0, content: '<p>Opening hours: 9-17</p>' },
          {
            id: 3,
            type: 2,
            suggestContent: 'People also ask',
            suggestList: [
              { id: 10, content: 'Where is my order?', type: 1 },
              { id: 11, content: 'How do I return an item?', type: 1 },
            ],
          },
        ],
      },
    },
  },
};
